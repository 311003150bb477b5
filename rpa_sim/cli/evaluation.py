"""The commands on DATA: ``evaluate`` (into an outcome table file), ``score``, ``sweep`` and ``certify``."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rpa_sim.cli.data import evaluate_data, evaluate_each_shard, shows_progress
from rpa_sim.cli.options import (
    NAMES_HELP,
    OUT_WORDS,
    bounded,
    by_argument,
    data_arguments,
    format_arguments,
    guarantee_arguments,
    out_argument,
    policy_argument,
    reviewer_arguments,
    seed_argument,
    size,
    usage_error,
)
from rpa_sim.cli.output import csv_text, curve_table, json_text, print_text, say, table, write_or_print
from rpa_sim.common import limits
from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.common.progress import stage

if TYPE_CHECKING:
    from rpa_sim.evaluate.outcomes import OutcomeTable
    from rpa_sim.route.policies import Policy

__all__ = ["COMMANDS", "add_parsers"]


def add_parsers(commands: Any) -> None:
    """The parsers of ``evaluate``, ``score``, ``sweep`` and ``certify``, added to ``commands``."""
    evaluate = commands.add_parser("evaluate", help="evaluate records once into an outcome table file (Parquet) "
                                                    "that every command taking DATA reads")
    data_arguments(evaluate, tables=False)
    evaluate.add_argument("--out", type=table_output, required=True, metavar="FILE|DIR/",
                          help=f"the outcome table (Parquet; name it .parquet), or a folder named with a trailing / "
                               f"that gets a table per shard of DATA (part-00000.parquet, ...), which every command "
                               f"reads back as DATA; {OUT_WORDS} (required)")

    score = commands.add_parser("score", help="corpus metrics of the predictions as they are")
    data_arguments(score)
    format_arguments(score, what="the figures")

    sweep = commands.add_parser("sweep", help="trade-off curves, one row per policy and threshold",
                                epilog=NAMES_HELP)
    data_arguments(sweep)
    policy_argument(sweep, many=True, required=True, when="repeat for several; required")
    sweep.add_argument("--thresholds", default="exact", metavar="SPEC",
                       help="exact (every distinct threshold), linspace:START:STOP:NUM (at most 1,000,000 points), "
                            "or a comma list of numbers (default: exact)")
    format_arguments(sweep, what="the rows (table: a summary of each policy's curve, unless --all-rows)")
    sweep.add_argument("--all-rows", action="store_true",
                       help="with --format table: every row, instead of each policy's first and last rows and those "
                            "nearest the auto-rates 0%%, 5%%, ..., 100%% (default: the summary; csv and json hold "
                            "every row)")
    out_argument(sweep, required=False, what="the rows in this file instead of printed", default_help="print them")
    reviewer_arguments(sweep)
    sweep.add_argument("--replicates", type=size("replicates", most=limits.MOST_REPLICATES,
                                                 limited_by="a fixed ceiling: each replicate draws every item"),
                       default=0, metavar="N",
                       help=f"add Monte Carlo spread columns from N seeded replays (audits, misses, false "
                            f"corrections), at most {limits.MOST_REPLICATES:,}; 0 = none (default: 0)")
    seed_argument(sweep, what="the Monte Carlo replays")

    certify = commands.add_parser("certify", help="the most permissive threshold with a guaranteed error rate",
                                  epilog=NAMES_HELP)
    data_arguments(certify)
    policy_argument(certify, when="certify its swept threshold: the guarantee is on the values it auto-accepts, "
                                  "those it reviews or rejects left out; default: none, the confidence itself")
    guarantee_arguments(certify, delta=None, delta_means="the certified threshold's error rate above --max-error")
    certify.add_argument("--calibration-fraction", type=bounded(float, low=0.0, high=1.0, open_low=True),
                         default=0.5, metavar="SHARE",
                         help="share of documents used to certify, in (0, 1]; the rest checks it (default: 0.5)")
    seed_argument(certify, what="the calibration split")
    by_argument(certify, goes_with="not with --policy; ")
    format_arguments(certify, what="the result (table: the guarantee in words)")


def table_output(text: str) -> str:
    """An argparse type: ``evaluate --out``, a table file, or with a trailing slash a folder of tables; the one
    that is the other kind already is bad usage, as a folder for any ``--out`` is."""
    folder = text.endswith(("/", os.sep))
    if not folder and Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file (a folder of tables is named with a "
                                         f"trailing /)")
    if folder and Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder")
    return text


@shows_progress
def evaluate_to_file(args: argparse.Namespace) -> int:
    """``evaluate DATA --out TABLE``: DATA evaluated once into an outcome table file (or a folder of them)."""
    from rpa_sim.common.files import check_output  # noqa: PLC0415
    from rpa_sim.evaluate.sources import resolve_shards  # noqa: PLC0415
    from rpa_sim.evaluate.tablefile import is_table_file, write_table  # noqa: PLC0415

    # an --out that ends with a slash is a partitioned dataset, a table per shard; an existing folder named
    # without it stays an error, so that a slip of the keyboard never replaces a folder's partitions
    folder = args.out.endswith(("/", os.sep))
    args.out = Path(args.out)
    if not folder:
        check_output(args.out)
    shards = resolve_shards(args.data)
    table_shard = next((shard for shard in shards if is_table_file(shard)), None)
    if table_shard is not None:
        raise UsageError(f"evaluate: {table_shard} is an outcome table already; evaluate reads records")
    if folder:
        return _evaluate_to_folder(args)
    evaluated = evaluate_data(args)
    sources = [*shards] if args.predictions is None else [*shards, args.predictions]
    with stage(f"writing {args.out.name}"):
        write_table(evaluated, args.out, source=sources, skipped=args.skipped)
    say(f"wrote {args.out}")
    return 0


def _evaluate_to_folder(args: argparse.Namespace) -> int:
    """``evaluate DATA --out TABLES/``: an outcome table per shard of DATA (``part-00000.parquet``, ...)."""
    from rpa_sim.evaluate.sources import check_partitions_folder, write_partitions  # noqa: PLC0415

    check_partitions_folder(args.out)
    loaded = evaluate_each_shard(args)  # merged too: what reading the folder back will check
    shards = loaded.shards
    with stage(f"writing {len(shards)} tables into {args.out}"):
        write_partitions(loaded.parts, shards, args.out, predictions=args.predictions)
    say(f"wrote {len(shards)} outcome table{'' if len(shards) == 1 else 's'} into {args.out}")
    return 0


@shows_progress
def score(args: argparse.Namespace) -> int:
    """``score DATA``: the corpus metrics of the predictions as they are.

    None of them needs a confidence (KIEval, ANLS, SMuDGE compare values), so a prediction without one is read
    and every figure reported; how many predicted values have none is said (``without_confidence``), since the
    commands that route on the confidence refuse them without a policy's ``missing_confidence``.
    """
    import numpy as np  # noqa: PLC0415

    # the corpus figures never read the routing grounding, the slowest part of evaluating records with OCR
    evaluated = evaluate_data(args, locate=False, routes=False)
    without = int(np.count_nonzero(np.isnan(evaluated.confidence)))
    rows = evaluated.score_rows()
    if without:
        rows = [*rows, ("without a confidence", without)]
        say(f"rpa-sim: note: {without:,} of {len(evaluated.confidence):,} predicted values have no confidence: no "
            f"figure of score needs one, so none is left out; the commands that route (sweep, certify, run, replay, "
            f"plan-audit, export-policy) need a confidence or a policy's missing_confidence")
    text = f"{evaluated.score_title}\n{table(rows)}"
    payload = {**evaluated.summary(), "without_confidence": without, "skipped": args.skipped}
    print_text({"table": lambda: text, "csv": lambda: csv_text([payload]),
                "json": lambda: json_text(payload)}[args.format]())
    return 0


@shows_progress
def sweep(args: argparse.Namespace) -> int:
    """``sweep DATA --policy POLICY ...``: each policy's trade-off curve over the thresholds."""
    from rpa_sim.common.files import check_output  # noqa: PLC0415
    from rpa_sim.route.policies import load_policy  # noqa: PLC0415
    from rpa_sim.route.reviewer import Reviewer  # noqa: PLC0415
    from rpa_sim.route.sweep import Sweeper, curves_to_csv, curves_to_json, parse_thresholds  # noqa: PLC0415

    if args.out is not None:
        check_output(args.out)
    policies = [load_policy(p) for p in args.policy]
    try:
        grid = parse_thresholds(args.thresholds)
    except (InputError, UsageError) as problem:  # the grid is part of the command line: a usage error
        raise usage_error("sweep", f"argument --thresholds: {problem}") from None
    reviewer = Reviewer(miss_rate=args.miss_rate, false_correction_rate=args.false_correction_rate)
    evaluated = evaluate_data(args, policies=policies)
    curves = []
    with stage("sweeping", total=len(policies)) as advance:
        for policy in policies:
            sweeper = Sweeper(evaluated, policy, reviewer=reviewer)
            curve = sweeper.curve(grid)
            if args.replicates:
                curve = curve.with_spread(sweeper.replicate(args.replicates, seed=args.seed, grid=curve.threshold))
            curves.append(curve)
            advance(1)
    formats: dict[str, Callable[[list[Any]], str]] = {
        "csv": curves_to_csv, "json": curves_to_json,
        "table": lambda found: curve_table(found, every_row=args.all_rows)}
    write_or_print(formats[args.format](curves), args.out)
    return 0


@shows_progress
def certify(args: argparse.Namespace) -> int:
    """``certify DATA``: the most permissive threshold whose error rate is guaranteed, for the confidence, each
    part of the data (``--by``) or a policy (``--policy``)."""
    from rpa_sim.route.certify import certify_threshold  # noqa: PLC0415

    policy = None
    if args.policy is not None:
        if args.by is not None:
            raise usage_error("certify", "--by goes without --policy (a policy is certified on the whole data)")
        from rpa_sim.route.policies import load_policy  # noqa: PLC0415

        policy = load_policy(args.policy)
    evaluated = evaluate_data(args, policies=[] if policy is None else [policy])
    if policy is not None:
        return _certify_policy(args, evaluated, policy)
    if args.by is not None:
        return _certify_per_group(args, evaluated)
    with stage("certifying"):
        try:
            result = certify_threshold(evaluated.confidence, evaluated.errors(), max_error=args.max_error,
                                       delta=args.delta, calibration_fraction=args.calibration_fraction,
                                       seed=args.seed, groups=evaluated.review_units)
        except ValueError as problem:
            raise InputError(str(problem)) from None
    payload = result.to_dict()
    print_text({"table": lambda: result.guarantee, "csv": lambda: csv_text([payload]),
                "json": lambda: json_text(payload)}[args.format]())
    return 0


def _certify_policy(args: argparse.Namespace, evaluated: OutcomeTable, policy: Policy) -> int:
    """``certify --policy POLICY``: the policy's swept threshold certified as a study certifies it (its
    ``certify:``), the values it always reviews or rejects left out; the rows carry the policy's name first."""
    from rpa_sim.route.certify import CertifiedThreshold, certify_policy  # noqa: PLC0415
    from rpa_sim.route.sweep import Sweeper  # noqa: PLC0415

    sweeper = Sweeper(evaluated, policy)
    if policy.budget is not None:
        raise InputError(f"certify: policy {policy.name!r} has a review budget, which can let values through "
                         f"unreviewed whatever the threshold: no threshold of it can be certified")
    with stage("certifying"):
        try:
            certified = certify_policy(sweeper, max_error=args.max_error, delta=args.delta,
                                       calibration_fraction=args.calibration_fraction, seed=args.seed)
        except ValueError as problem:
            raise InputError(str(problem)) from None
    assert isinstance(certified, CertifiedThreshold), "a policy without a budget is certified or refused"
    payload = {"policy": policy.name, **certified.to_dict()}
    text = f"policy {policy.name}: {certified.guarantee}"
    print_text({"table": lambda: text, "csv": lambda: csv_text([payload]),
                "json": lambda: json_text(payload)}[args.format]())
    return 0


def _certify_per_group(args: argparse.Namespace, evaluated: OutcomeTable) -> int:
    """``certify --by``: one certified threshold per document type or field; rows carry the part's name first."""
    from rpa_sim.route.certify import certify_per_group  # noqa: PLC0415

    codes, names = ((evaluated.document_type_codes, evaluated.document_types) if args.by == "document_type"
                    else (evaluated.field_codes, evaluated.field_names))
    with stage("certifying"):
        try:
            results = certify_per_group(evaluated.confidence, evaluated.errors(), codes, names,
                                        groups=evaluated.review_units, max_error=args.max_error, delta=args.delta,
                                        calibration_fraction=args.calibration_fraction, seed=args.seed)
        except ValueError as problem:
            raise InputError(str(problem)) from None
    rows = [{args.by: name, **result.to_dict()} for name, result in results.items()]
    part = args.by.replace("_", " ")  # "document type invoice: ...", in words
    text = "\n\n".join(f"{part} {name or '(none)'!s}: {result.guarantee}" for name, result in results.items())
    print_text({"table": lambda: text, "csv": lambda: csv_text(rows) if rows else "",
                "json": lambda: json_text(rows)}[args.format]())
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "evaluate": evaluate_to_file, "score": score, "sweep": sweep, "certify": certify}
