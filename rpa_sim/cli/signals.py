"""``rpa-sim signals DATA``: what each confidence signal is worth for routing, their fusion, the cheapest set."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rpa_sim.cli.data import evaluate_data, shows_progress
from rpa_sim.cli.options import (
    NAMES_HELP,
    SHARE,
    bounded,
    by_argument,
    data_arguments,
    format_arguments,
    guarantee_arguments,
    out_argument,
    seed_argument,
    usage_error,
)
from rpa_sim.cli.output import csv_text, json_text, print_result, write_or_print
from rpa_sim.common.errors import InputError
from rpa_sim.common.progress import stage

if TYPE_CHECKING:
    from rpa_sim.route.signals.analysis import SignalSummary
    from rpa_sim.route.signals.subsets import SubsetSearch
    from rpa_sim.route.signals.table import SignalsPart

__all__ = ["COMMANDS", "add_parsers"]


def add_parsers(commands: Any) -> None:
    """The parser of ``signals``, added to ``commands``."""
    parser = commands.add_parser(
        "signals", help="what each confidence signal is worth for routing, their fusion and the cheapest set "
                        "that certifies", epilog=NAMES_HELP)
    data_arguments(parser)
    by_argument(parser)
    guarantee_arguments(parser, delta=None, optional=True,
                        delta_means="that a signal's certified threshold lets more than --max-error through")
    parser.add_argument("--calibration-fraction", type=bounded(float, low=0.0, high=1.0, open_low=True),
                        default=0.5, metavar="SHARE",
                        help="share of documents used to certify, in (0, 1]; the rest checks it (default: 0.5)")
    seed_argument(parser, what="the calibration split and the fused signal's folds")
    parser.add_argument("--costs", type=Path, metavar="FILE",
                        help="YAML or JSON mapping each signal that may be bought to its cost per value "
                             "(logprob: 0, agreement: 0.004): the cheapest set is searched over these, at most 10 "
                             "(default: none); needs --max-error and --delta")
    parser.add_argument("--target-auto-rate", type=SHARE, metavar="SHARE",
                        help="the certified automation, in [0, 1], the cheapest set must reach (default: none: the "
                             "subsets are listed, none chosen); needs --max-error and --delta")
    format_arguments(parser, what="the figures (table: the figures, then the verdicts in words)")
    out_argument(parser, required=False, what="the figures in this file instead of printed", default_help="print them")


@shows_progress
def signals(args: argparse.Namespace) -> int:
    """``signals DATA``: each signal's AUROC, calibration, verdicts and certified automation, the fused signal's,
    and with ``--costs`` or ``--target-auto-rate`` the cheapest set that certifies."""
    from rpa_sim.common.files import check_output  # noqa: PLC0415
    from rpa_sim.route.signals.analysis import Certification  # noqa: PLC0415
    from rpa_sim.route.signals.table import analyse_table  # noqa: PLC0415

    if (args.max_error is None) != (args.delta is None):
        raise usage_error("signals", "--max-error and --delta go together")
    if args.max_error is None and (args.costs is not None or args.target_auto_rate is not None):
        raise usage_error("signals", "--costs and --target-auto-rate need --max-error and --delta: the cheapest "
                                     "set is the one that certifies")
    if args.out is not None:
        check_output(args.out)
    costs = None if args.costs is None else _read_costs(args.costs)
    certification = None if args.max_error is None else Certification(
        max_error=args.max_error, delta=args.delta, calibration_fraction=args.calibration_fraction, seed=args.seed)
    evaluated = evaluate_data(args, locate=False)
    with stage("measuring signals"):
        try:
            parts = analyse_table(evaluated, by=args.by, certification=certification, costs=costs,
                                  target_auto_rate=args.target_auto_rate)
        except ValueError as problem:
            where = f"{args.costs}: " if args.costs is not None and "cost" in str(problem) else ""
            raise InputError(f"signals: {where}{problem}") from None
    formats: dict[str, Callable[[], str]] = {
        "table": lambda: "\n\n".join(_part_text(part, args.by) for part in parts),
        "csv": lambda: csv_text(_csv_rows(parts, args.by)),
        "json": lambda: json_text(_json_payload(parts, args.by, certification))}
    if args.out is None:  # printed: the table's text fitted to the terminal, as run's is (docs/cli.md, "Widths")
        print_result(args.format, formats)
    else:
        write_or_print(formats[args.format](), args.out)
    return 0


def _read_costs(path: Path) -> dict[str, Any]:
    """The costs file: a mapping of signal names to numbers (checked against the data's signals later)."""
    from rpa_sim.common.yamlfile import read_yaml  # noqa: PLC0415

    found = read_yaml(path)
    if not isinstance(found, dict) or not all(isinstance(name, str) for name in found):
        raise InputError("costs must be a mapping of signal names to a cost per value (logprob: 0, agreement: "
                         "0.004)", path=str(path))
    return found


# -- the table ------------------------------------------------------------------------------------------------


def _part_text(part: SignalsPart, by: str | None) -> str:
    """One part's figures, the verdicts in words, what the fused signal leans on, and the subsets."""
    from rpa_sim.common.formatting import count, share  # noqa: PLC0415

    head = "" if part.name is None else f"{by} {part.name or '(none)'}: "
    analysis = part.analysis
    certified = analysis.certification
    lines = [f"{head}{count(part.values)} values, {count(part.errors)} errors ({share(part.errors / part.values)})"
             + ("" if certified is None else
                f"; automation certified at max_error {certified.max_error:g}, delta {certified.delta:g}")]
    header = ("signal", "AUROC (95% interval)", "ECE", "Brier", "automation", "cost", "verdicts")
    rows = [header, *(_signal_cells(summary) for summary in analysis.summaries)]
    lines.append(_aligned(rows))
    lines.append("")
    lines += [f"  {summary.name}: {summary.words}" for summary in analysis.summaries]
    if analysis.fusion is not None:
        weights = ", ".join(f"{name} {weight:.2f}" for name, weight in
                            sorted(zip(analysis.fusion.names, analysis.fusion.weights.tolist()),
                                   key=lambda item: -item[1]))
        lines.append(f"  fused: a monotone logistic combination learnt on other documents than those it scores; "
                     f"weights {weights}")
    if part.subsets is not None:
        lines += ["", *_subsets_text(part.subsets)]
    return "\n".join(lines)


def _signal_cells(summary: SignalSummary) -> tuple[str, ...]:
    from rpa_sim.common.formatting import number, share  # noqa: PLC0415

    found = summary.discrimination
    interval = "" if math.isnan(found.low) else f" ({found.low:.2f}-{found.high:.2f})"
    return (summary.name, f"{number(found.auroc, 3)}{interval}", number(summary.ece, 3), number(summary.brier, 3),
            "-" if summary.automation is None else share(summary.automation),
            "-" if summary.cost is None else f"{summary.cost:g}", ", ".join(summary.verdicts) or "-")


def _subsets_text(search: SubsetSearch) -> list[str]:
    from rpa_sim.common.formatting import share  # noqa: PLC0415

    target = search.target_auto_rate
    if target is None:
        lines = ["Every set of signals, cheapest first (no target: none chosen):"]
    elif search.cheapest is None:
        lines = [f"No set of signals certifies an automation of {share(target)} or more: review more, relax "
                 f"max_error or delta, or add a signal. Every set, cheapest first:"]
    else:
        best = search.cheapest
        lines = [f"Cheapest set that certifies an automation of {share(target)} or more: "
                 f"{' + '.join(best.signals)}, at {best.cost:g} per value (certified automation "
                 f"{share(best.automation)}). Every set, cheapest first:"]
    rows = [("signals", "cost", "AUROC", "automation", "meets target")]
    rows += [("+".join(row.signals), f"{row.cost:g}", "n/a" if math.isnan(row.auroc) else f"{row.auroc:.3f}",
              share(row.automation), "-" if row.meets is None else ("yes" if row.meets else "no"))
             for row in search.rows]
    return [*lines, _aligned(rows)]


def _aligned(rows: Sequence[tuple[str, ...]]) -> str:
    """A header over a rule, then rows of cells, each column as wide as its widest cell; the first and the last
    column to the left, the others to the right (the form :func:`~rpa_sim.cli.output.fitted` fits to a terminal)."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    rule = tuple("-" * width for width in widths)
    return "\n".join("  ".join(cell.ljust(width) if column in (0, len(row) - 1) else cell.rjust(width)
                               for column, (cell, width) in enumerate(zip(row, widths))).rstrip()
                     for row in (rows[0], rule, *rows[1:]))


# -- CSV and JSON ---------------------------------------------------------------------------------------------


def _csv_rows(parts: list[SignalsPart], by: str | None) -> list[dict[str, Any]]:
    """A row per signal, then a row per subset searched (``row``: signal or subset), one shape for all."""
    rows = []
    for part in parts:
        group = {} if by is None else {by: part.name}
        for summary in part.analysis.summaries:
            figures = summary.to_dict()
            rows.append({**group, "row": "signal", "signals": figures.pop("signal"), **figures,
                         "verdicts": " ".join(figures["verdicts"]), "meets_target": None})
        if part.subsets is not None:
            for subset in part.subsets.rows:
                found = subset.to_dict()
                rows.append({**group, "row": "subset", "signals": found["signals"], "values": part.values,
                             "carried": None, "auroc": found["auroc"], "auroc_low": None, "auroc_high": None,
                             "ece": None, "brier": None, "threshold": found["threshold"],
                             "certified_automation": found["certified_automation"], "cost": found["cost"],
                             "verdicts": None, "words": None, "meets_target": found["meets_target"]})
    return rows


def _json_payload(parts: list[SignalsPart], by: str | None, certification: Any) -> dict[str, Any]:
    def part_payload(part: SignalsPart) -> dict[str, Any]:
        analysis = part.analysis
        fusion = analysis.fusion
        subsets = part.subsets
        return {
            **({} if by is None else {by: part.name}),
            "values": part.values, "errors": part.errors,
            "signals": [{**summary.to_dict(), "reliability": _reliability(summary)} for summary in analysis.summaries],
            "fusion": None if fusion is None else {
                "method": "logistic regression on normal scores, non-negative weights, cross-fitted by document",
                "intercept": fusion.intercept, "weights": dict(zip(fusion.names, fusion.weights.tolist())),
                "missing": dict(zip(fusion.names, fusion.absent.tolist()))},
            "subsets": None if subsets is None else {
                "target_auto_rate": subsets.target_auto_rate,
                "cheapest": None if subsets.cheapest is None else subsets.cheapest.to_dict(),
                "rows": [row.to_dict() for row in subsets.rows]},
        }

    settings = None if certification is None else {
        "max_error": certification.max_error, "delta": certification.delta,
        "calibration_fraction": certification.calibration_fraction, "seed": certification.seed}
    if by is None:
        return {"certification": settings, **part_payload(parts[0])}
    return {"certification": settings, "by": by, "parts": [part_payload(part) for part in parts]}


def _reliability(summary: SignalSummary) -> list[dict[str, Any]]:
    table = summary.reliability
    if table is None:
        return []
    return [{"lower": float(table.lower[i]), "upper": float(table.upper[i]), "count": int(table.count[i]),
             "mean_signal": None if table.count[i] == 0 else float(table.mean_confidence[i]),
             "share_right": None if table.count[i] == 0 else float(table.accuracy[i])} for i in range(len(table))]


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"signals": signals}
