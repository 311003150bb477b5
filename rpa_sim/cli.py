"""The ``rpa-sim`` command line.

Every command reads the results of the two stages (evaluate, then route and
sweep) and only formats them. Bad input ends with ``rpa-sim: error: ...`` on
standard error and exit status 1; usage errors exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from rpa_sim import __version__
from rpa_sim.metrics.calibration import is_correct
from rpa_sim.certify import certify_threshold
from rpa_sim.errors import InputError
from rpa_sim.files import atomic_write_text
from rpa_sim.generators import DocVQASettings, ReceiptSettings, write_dataset
from rpa_sim.importers.cord import import_cord
from rpa_sim.importers.docile import import_docile
from rpa_sim.importers.dude import import_dude
from rpa_sim.importers.kieval_csv import import_kieval_csv
from rpa_sim.importers.textract import import_textract_expense
from rpa_sim.data import load_table
from rpa_sim.outcomes import KIEOutcomes, VQAOutcomes
from rpa_sim.policies import load_policy
from rpa_sim.readers import write_records
from rpa_sim.report import write_report
from rpa_sim.reviewer import Reviewer
from rpa_sim.scenario import load_scenario
from rpa_sim.study import comparison_table, run_scenario, write_outputs
from rpa_sim.sweep import (
    Curve,
    Sweeper,
    curves_to_csv,
    curves_to_json,
    parse_thresholds,
)
from rpa_sim.tui import run_dashboard
from rpa_sim.yamlfile import read_yaml, validated

__all__ = ["main"]

DEMO_SCENARIO = "receipts-demo"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rpa-sim",
        description="Replay document-AI predictions through human-review policies.",
    )
    parser.add_argument("--version", action="version", version=f"rpa-sim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help=f"the bundled scenario ({DEMO_SCENARIO}): the dashboard in a terminal, "
                                             "else its comparison as text")
    demo.add_argument("--json", action="store_true", help="print the summary as JSON")
    demo.add_argument("--text", action="store_true", help="print the comparison as text even in a terminal")

    dashboard = commands.add_parser("dashboard", help="the interactive dashboard (Textual) on a scenario or records")
    dashboard.add_argument("source", nargs="?", metavar="SCENARIO|DATA",
                           help=f"a scenario (name or YAML) or a records file; default: {DEMO_SCENARIO}")
    dashboard.add_argument("--export-dir", type=Path, metavar="DIR",
                           help="where the dashboard writes exports and screenshots (default: here)")

    score = commands.add_parser("score", help="corpus metrics of the predictions as they are")
    _data_arguments(score)
    score.add_argument("--json", action="store_true", help="print the figures as JSON")

    sweep = commands.add_parser("sweep", help="trade-off curves, one row per policy and threshold")
    _data_arguments(sweep)
    sweep.add_argument("--policy", action="append", required=True, metavar="P",
                       help="a policy file or bundled policy name (repeat for several)")
    sweep.add_argument("--thresholds", default="exact", metavar="SPEC",
                       help="exact (every distinct threshold), linspace:START:STOP:NUM, or a comma list")
    sweep.add_argument("--format", choices=("table", "csv", "json"), default="table")
    sweep.add_argument("--out", type=Path, metavar="FILE", help="write to FILE (atomically) instead of printing")
    sweep.add_argument("--miss-rate", type=float, default=0.0, help="the reviewer misses this share of errors")
    sweep.add_argument("--false-correction-rate", type=float, default=0.0,
                       help="the reviewer breaks this share of correct values")
    sweep.add_argument("--replicates", type=int, default=0, metavar="N",
                       help="add Monte Carlo spread columns from N seeded replays (audits, misses, false corrections)")
    sweep.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the Monte Carlo replays")

    certify = commands.add_parser("certify", help="the most permissive threshold with a guaranteed error rate")
    _data_arguments(certify)
    certify.add_argument("--max-error", type=float, required=True, metavar="EPS",
                         help="largest acceptable error rate of auto-accepted predictions")
    certify.add_argument("--delta", type=float, required=True, metavar="D",
                         help="allowed probability that the guarantee fails")
    certify.add_argument("--calibration-fraction", type=float, default=0.5, metavar="F",
                         help="share of documents used to certify; the rest checks it (default 0.5)")
    certify.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the calibration split")
    certify.add_argument("--json", action="store_true", help="print the result as JSON")

    run = commands.add_parser("run", help="everything a scenario asks for: curves, comparison, costs")
    run.add_argument("scenario", metavar="SCENARIO", help="a scenario YAML file or bundled scenario name")
    run.add_argument("--out", type=Path, metavar="DIR", help="write curves.csv and summary.json into DIR")
    run.add_argument("--json", action="store_true", help="print the summary as JSON instead of the table")

    report = commands.add_parser("report", help="a self-contained HTML report of a scenario, with its plots")
    report.add_argument("scenario", metavar="SCENARIO", help="a scenario YAML file or bundled scenario name")
    report.add_argument("--out", type=Path, required=True, metavar="FILE", help="the HTML file to write")
    report.add_argument("--png", type=Path, metavar="DIR", help="also write each plot as a PNG file into DIR")

    generate = commands.add_parser("generate", help="realistic synthetic data: receipts (KIE) or document questions")
    generate.add_argument("kind", choices=("receipts", "docvqa"), help="what to generate")
    generate.add_argument("--n", type=int, required=True, metavar="N", help="how many documents (docvqa: questions)")
    generate.add_argument("--seed", type=int, required=True, metavar="S", help="the same seed gives the same bytes")
    generate.add_argument("--out", type=Path, required=True, metavar="FILE", help="canonical .jsonl(.gz) output")
    generate.add_argument("--settings", type=Path, metavar="YAML",
                          help="generator settings (error rates, confidence model, ...); see docs/generators.md")
    generate.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 4), metavar="W",
                          help="processes that generate; the output is the same for any number (default: the cores, "
                               "at most 4)")

    importer = commands.add_parser("import", help="convert a real format into canonical records")
    formats = importer.add_subparsers(dest="format", required=True, metavar="FORMAT")
    kieval_csv = _import_format(formats, "kieval-csv", "the official KIEval CSV blocks (SRC/gt, SRC/pred)",
                                "folder with gt/ and pred/ CSV files", predictions=None)
    kieval_csv.add_argument("--shortlist", metavar="KEYS",
                            help="comma-separated keys to keep (the official shortlist); default: all keys")
    _import_format(formats, "cord", "CORD v1/v2 receipts: ground truth and OCR (gt_parse, valid_line)",
                   "a folder of CORD .json files, one .json file, or a .jsonl of v2 rows",
                   predictions="a folder of model outputs (Qwen/KIEval JSON), matched by file name")
    docile = _import_format(formats, "docile", "a DocILE dataset folder: key fields, line items and OCR",
                            "the dataset folder (annotations/, ocr/) or one of its split files",
                            predictions="canonical prediction records (.jsonl), joined on id")
    docile.add_argument("--segment", choices=("block", "line"), default="block",
                        help="which docTR unit bounds the spans used for grounding (default: block)")
    _import_format(formats, "textract-expense", "AWS Textract AnalyzeExpense responses: predictions only",
                   "a response .json file or a folder of them", predictions=None)
    _import_format(formats, "dude", "DUDE questions: ground truth, and a submission's answers",
                   "the DUDE ground-truth JSON", predictions="a DUDE submission (answers, answers_confidence)")
    return parser


def _import_format(formats, name: str, summary: str, source: str, *, predictions: str | None):
    parser = formats.add_parser(name, help=summary)
    parser.add_argument("source", type=Path, metavar="SRC", help=source)
    parser.add_argument("--out", type=Path, required=True, metavar="FILE", help="canonical .jsonl(.gz) output")
    if predictions is not None:
        parser.add_argument("--predictions", type=Path, metavar="P", help=predictions)
    return parser


def _data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", type=Path, metavar="DATA", help="records (.jsonl or .jsonl.gz)")
    parser.add_argument("--predictions", type=Path, metavar="FILE",
                        help="predictions joined to DATA on id (DATA then holds the ground truth)")
    parser.add_argument("--task", choices=("kie", "vqa"), help="default: inferred from the records")
    parser.add_argument("--skip-invalid", action="store_true",
                        help="skip records that do not fit the format and report them, instead of stopping")
    parser.add_argument("--value-match", choices=("exact", "normalized"), default="exact",
                        help="KIE: compare values exactly (the official KIEval) or with case and spaces folded")
    parser.add_argument("--alpha", type=float, default=0.25, help="VQA: SMuDGE's weight of the match score")


def _number(value: float | int | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.4f}"


def _table(rows: Sequence[tuple[str, float | int | None]]) -> str:
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"  {name:<{width}}  {_number(value):>10}" for name, value in rows)


def _kie_report(table: KIEOutcomes) -> str:
    c = table.counts
    rows = [
        ("documents", c.documents), ("entities (ground truth)", c.entities_gt),
        ("entities (predicted)", c.entities_pred), ("correct (TP)", c.tp),
        ("substitutions", c.substitutions), ("additions", c.additions), ("deletions", c.deletions),
        ("KIEval entity F1", c.entity_f1), ("KIEval group F1", c.group_f1),
        ("KIEval_Aligned", c.kieval_aligned), ("group-level aligned", c.group_aligned),
        ("entity F1, grouping-blind", c.grouping_blind_entity_f1),
    ]
    if c.ignored_empty:
        rows.append(("ignored (empty value)", c.ignored_empty))
    return f"KIE, values compared {table.value_match}ly\n" + _table(rows)


def _vqa_report(table: VQAOutcomes) -> str:
    s = table.summary()
    rows = [("questions", s["questions"]), ("ANLS", s["anls"]), ("accuracy", s["accuracy"]),
            (f"SMuDGE (alpha {table.alpha:g})", s["smudge"]), ("match", s["match"]),
            ("grounding", s["grounding"]), ("evidence IoU", s["evidence_iou"]),
            ("absolute deviation", s["absolute_deviation"])]
    return "Document VQA\n" + _table(rows)


def _print_json(payload: dict) -> None:
    print(json.dumps(payload, indent=2, allow_nan=False))


def _evaluate(args: argparse.Namespace) -> KIEOutcomes | VQAOutcomes:
    """Read and evaluate DATA, reporting skipped records on standard error."""
    loaded = load_table(args.data, predictions=args.predictions, task=args.task, skip_invalid=args.skip_invalid,
                        value_match=args.value_match, alpha=args.alpha)
    if loaded.skipped:
        print(f"rpa-sim: {loaded.skipped_summary}", file=sys.stderr)
        for error in loaded.skipped[:20]:
            print(f"  {error}", file=sys.stderr)
        if len(loaded.skipped) > 20:
            print(f"  ... and {len(loaded.skipped) - 20} more", file=sys.stderr)
    args.skipped = len(loaded.skipped)
    return loaded.table


def _score(args: argparse.Namespace) -> int:
    table = _evaluate(args)
    if isinstance(table, KIEOutcomes):
        payload = {**table.counts.to_dict(), "value_match": table.value_match}
        text = _kie_report(table)
    else:
        payload = table.summary()
        text = _vqa_report(table)
    if args.json:
        _print_json({**payload, "skipped": args.skipped})
    else:
        print(text)
    return 0


def _curve_table(curves: list[Curve]) -> str:
    names = curves[0].column_names()
    rows = [[str(row[n]) if isinstance(row[n], str) else _number(row[n]) if row[n] is not None else "n/a"
             for n in names] for curve in curves for row in curve.rows()]
    widths = [max(len(x) for x in column) for column in zip(names, *rows)]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(line, widths)) for line in [list(names), *rows])


def _write_or_print(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    atomic_write_text(out, text if text.endswith("\n") else text + "\n")
    print(f"wrote {out}", file=sys.stderr)


def _sweep(args: argparse.Namespace) -> int:
    policies = [load_policy(p) for p in args.policy]
    grid = parse_thresholds(args.thresholds)
    reviewer = _reviewer(args)
    if args.replicates < 0 or args.seed < 0:
        raise InputError(f"--replicates and --seed must be non-negative, got {args.replicates} and {args.seed}")
    table = _evaluate(args)
    curves = []
    for policy in policies:
        sweeper = Sweeper(table, policy, reviewer=reviewer)
        curve = sweeper.curve(grid)
        if args.replicates:
            curve = curve.with_spread(sweeper.replicate(args.replicates, seed=args.seed, grid=curve.threshold))
        curves.append(curve)
    text = {"csv": curves_to_csv, "json": curves_to_json, "table": _curve_table}[args.format](curves)
    _write_or_print(text, args.out)
    return 0


def _reviewer(args: argparse.Namespace) -> Reviewer:
    try:
        return Reviewer(miss_rate=args.miss_rate, false_correction_rate=args.false_correction_rate)
    except ValueError as error:
        problems = "; ".join(e["msg"] for e in error.errors())
        raise InputError(f"reviewer rates must be in [0, 1]: {problems}") from None


def _certify(args: argparse.Namespace) -> int:
    table = _evaluate(args)
    error = ~is_correct(table)
    groups = table.document if isinstance(table, KIEOutcomes) else None
    try:
        result = certify_threshold(table.confidence, error, max_error=args.max_error, delta=args.delta,
                                   calibration_fraction=args.calibration_fraction, seed=args.seed, groups=groups)
    except ValueError as problem:
        raise InputError(str(problem)) from None
    if args.json:
        _print_json(result.to_dict())
    else:
        print(result.guarantee)
    return 0


def _run(args: argparse.Namespace) -> int:
    scenario, base = load_scenario(args.scenario)
    result = run_scenario(scenario, base)
    if args.out is not None:
        for path in write_outputs(result, args.out):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        _print_json(result.summary)
    else:
        print(f"{scenario.name}: {scenario.description}\n")
        print(comparison_table(result))
    return 0


def _import(args: argparse.Namespace) -> int:
    if args.format == "kieval-csv":
        shortlist = None if args.shortlist is None else {k.strip() for k in args.shortlist.split(",") if k.strip()}
        records, report = import_kieval_csv(args.source, shortlist=shortlist)
    elif args.format == "cord":
        records, report = import_cord(args.source, predictions=args.predictions)
    elif args.format == "docile":
        records, report = import_docile(args.source, predictions=args.predictions, segment=args.segment)
    elif args.format == "textract-expense":
        records, report = import_textract_expense(args.source)
    else:
        records, report = import_dude(args.source, predictions=args.predictions)
    written = write_records(records, args.out)
    print(f"wrote {written} records to {args.out}")
    for line in report.lines():
        print(line)
    return 0


def _report(args: argparse.Namespace) -> int:
    scenario, base = load_scenario(args.scenario)
    path = write_report(run_scenario(scenario, base), args.out, png_dir=args.png)
    print(f"wrote {path}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    if args.n < 0 or args.seed < 0 or args.workers < 1:
        raise InputError(f"--n and --seed must be non-negative and --workers positive, "
                         f"got {args.n}, {args.seed} and {args.workers}")
    model = ReceiptSettings if args.kind == "receipts" else DocVQASettings
    settings = model() if args.settings is None else validated(model, read_yaml(args.settings) or {},
                                                               source=str(args.settings))
    written = write_dataset(args.kind, args.out, n=args.n, seed=args.seed, settings=settings, workers=args.workers)
    print(f"wrote {written} {args.kind} records to {args.out}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    if sys.stdin.isatty() and sys.stdout.isatty() and not (args.json or args.text):
        return run_dashboard(DEMO_SCENARIO)
    args.scenario, args.out = DEMO_SCENARIO, None
    return _run(args)


def _dashboard(args: argparse.Namespace) -> int:
    return run_dashboard(args.source, export_dir=args.export_dir)


_COMMANDS = {"demo": _demo, "score": _score, "sweep": _sweep, "certify": _certify, "run": _run, "import": _import,
             "generate": _generate, "report": _report, "dashboard": _dashboard}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except InputError as error:
        print(f"rpa-sim: error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader of our output went away (e.g. `| head`): not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
