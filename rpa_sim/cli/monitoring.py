"""Production monitoring (docs/monitoring.md): ``replay`` a day into a log, ``estimate`` from a log, ``plan-audit``."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rpa_sim.cli.data import evaluate_data, shows_progress
from rpa_sim.cli.options import (
    FOLDER_WORDS,
    NAMES_HELP,
    POSITIVE,
    SHARE,
    bounded,
    confidence_level_argument,
    data_arguments,
    format_arguments,
    monitored_policy_arguments,
    out_argument,
    output_folder,
    reviewer_arguments,
    seed_argument,
    size,
    usage_error,
)
from rpa_sim.cli.output import csv_text, json_text, named_lines, number, print_text, say
from rpa_sim.common import limits
from rpa_sim.common.errors import InputError
from rpa_sim.common.progress import stage

__all__ = ["COMMANDS", "add_parsers"]


def add_parsers(commands: Any) -> None:
    """The parsers of ``replay``, ``estimate`` and ``plan-audit``, added to ``commands``."""
    replay = commands.add_parser("replay", help="one production day of a policy at a threshold: a log of routes, "
                                                "audits and what people found (docs/monitoring.md); with --days, a "
                                                "scenario's stream of days under named changes (docs/live.md)",
                                 epilog=NAMES_HELP)
    data_arguments(replay)
    monitored_policy_arguments(replay, required="without --days: required")
    audit = replay.add_mutually_exclusive_group()
    audit.add_argument("--audit-rate", type=SHARE, metavar="SHARE",
                       help="share of auto-accepted items drawn at random for a careful check, in [0, 1] "
                            "(default: the policy's audit share)")
    audit.add_argument("--audit-plan", type=Path, metavar="FILE",
                       help="per-stratum audit rates, a YAML file as plan-audit writes it (default: none)")
    reviewer_arguments(replay, default=None)
    seed_argument(replay, what="the day's draws (audits, misses, false corrections); with --days, in place of the "
                               "stream's seed", default=None)
    replay.add_argument("--day", type=_date, metavar="YYYY-MM-DD",
                        help="write this day on every row, so that rpa-sim watch can follow the logs of several days "
                             "(default: no day column)")
    out_argument(replay, old="--log", required=False, when="without --days: required",
                 what="the production log (JSON Lines, gzip-compressed when it ends in .gz)")
    replay.add_argument("--days", type=size("days", most=limits.MOST_MONITORED_DAYS, least=1,
                                            limited_by="a fixed ceiling: every day draws its documents"),
                        metavar="N",
                        help="replay the stream of the scenario SCENARIO (given in place of DATA; its stream: "
                             "section): N days of logs under its changes, a file a day named by its date, into "
                             "--out-dir (default: one day of DATA)")
    replay.add_argument("--out-dir", type=output_folder, metavar="DIR",
                        help=f"with --days: the day logs (YYYY-MM-DD.jsonl) and stream.json (what each change "
                             f"plants), all or none, {FOLDER_WORDS} (with --days: required)")

    estimate = commands.add_parser("estimate", help="the error rate of auto-accepted items and the post-correction "
                                                    "quality, with intervals, from a production log")
    estimate.add_argument("log", type=Path, metavar="LOG",
                          help="a production log (JSON Lines, .gz too): rpa-sim replay's, or a team's export in the "
                               "format of docs/monitoring.md")
    estimate.add_argument("--method", choices=("classical", "stratified", "ppi"), required=True,
                          help="classical (one audit rate; exact), stratified (a rate per stratum; exact per stratum, "
                               "Bonferroni) or ppi (PPI++, the confidences as the proxy) (required)")
    confidence_level_argument(estimate)
    format_arguments(estimate, what="the estimate")

    plan = commands.add_parser("plan-audit", help="how many auto-accepted items to audit, per confidence band "
                                                  "(Neyman allocation)", epilog=NAMES_HELP)
    data_arguments(plan)
    monitored_policy_arguments(plan)
    sized = plan.add_mutually_exclusive_group(required=True)
    sized.add_argument("--target-width", type=bounded(float, low=0.0, high=1.0, open_low=True), metavar="SHARE",
                       help="the widest interval wanted, in (0, 1]: the fewest audits whose normal-theory width at "
                            "the confidences' prior error rates is at most W (default: none; this or --budget is "
                            "required)")
    sized.add_argument("--budget", type=POSITIVE, metavar="N",
                       help="the audits to spread, an integer >= 1 (default: none; this or --target-width is "
                            "required)")
    confidence_level_argument(plan)
    plan.add_argument("--bands", type=size("bands", most=limits.MOST_BANDS, least=1, limited_by="a fixed ceiling",
                                           bytes_each=limits.BAND_BYTES), default=4, metavar="N",
                      help="the most confidence bands, of about equal size (fewer with tied confidences, and at most "
                           "--budget) (default: 4)")
    plan.add_argument("--cost-per-audit", type=bounded(float, low=0.0, high=math.inf, open_high=True),
                      metavar="AMOUNT",
                      help="what one audit costs, a number >= 0: gives the plan a cost (default: none)")
    out_argument(plan, required=False, what="the plan for replay --audit-plan (YAML)",
                 default_help="none, the plan is printed only")
    format_arguments(plan, what="the plan (csv: one row per band)")


def _date(text: str) -> str:
    """An argparse type: a date ``YYYY-MM-DD``."""
    from rpa_sim.common.dates import day_of  # noqa: PLC0415

    try:
        return day_of(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None


@shows_progress
def replay(args: argparse.Namespace) -> int:
    """``replay DATA --policy POLICY --threshold T --out LOG``: one production day, as its log; ``replay SCENARIO
    --days N --out-dir DIR``: the scenario's stream (:func:`rpa_sim.cli.streams.replay_stream`)."""
    from rpa_sim.common.files import check_output  # noqa: PLC0415
    from rpa_sim.operate.monitoring.audit_plan import load_audit_plan  # noqa: PLC0415
    from rpa_sim.operate.monitoring.log import write_log  # noqa: PLC0415
    from rpa_sim.operate.monitoring.replay import Replayer  # noqa: PLC0415
    from rpa_sim.route.policies import load_policy  # noqa: PLC0415
    from rpa_sim.route.reviewer import Reviewer  # noqa: PLC0415

    if args.days is not None:
        from rpa_sim.cli.streams import replay_stream  # noqa: PLC0415

        return replay_stream(args)
    missing = [option for option, value in (("--policy", args.policy), ("--threshold", args.threshold),
                                            ("--out", args.out)) if value is None]
    if missing:
        raise usage_error("replay", f"the following arguments are required: {', '.join(missing)}")
    if args.out_dir is not None:
        raise usage_error("replay", "--out-dir goes with --days (a scenario's stream, a log a day); one day of DATA "
                                    "is written to --out FILE")
    check_output(args.out)
    policy = load_policy(args.policy)
    audit = args.audit_rate if args.audit_plan is None else load_audit_plan(args.audit_plan)
    evaluated = evaluate_data(args)
    reviewer = Reviewer(miss_rate=args.miss_rate or 0.0, false_correction_rate=args.false_correction_rate or 0.0)
    with stage("replaying the day"):
        day = Replayer(evaluated, policy, threshold=args.threshold, audit=audit).day(seed=args.seed or 0,
                                                                                    reviewer=reviewer, date=args.day)
    with stage(f"writing {args.out.name}"):
        write_log(day.log, args.out)
    counts = day.log.counts()
    say(f"wrote {args.out}: {counts['rows']:,} rows, {counts['reviewed']:,} reviewed, {counts['auto_accepted']:,} "
        f"auto-accepted ({counts['audited']:,} audited)")
    return 0


def _interval_text(interval: dict[str, float | None]) -> str:
    return f"{number(interval['estimate'])}  [{number(interval['low'])}, {number(interval['high'])}]"


def _estimate_table(payload: dict[str, Any]) -> str:
    level = f"{payload['confidence_level'] * 100:g}%"
    rows = [("rows", number(payload["rows"])), ("reviewed", number(payload["reviewed"])),
            ("auto-accepted", number(payload["auto_accepted"])), ("audited", number(payload["audited"])),
            ("errors found by audits", number(payload["audit_errors"])),
            ("errors reported by reviewers", number(payload["reviewed_errors"])),
            ("auto-accepted error rate", _interval_text(payload["auto_error"])),
            ("post-correction quality", _interval_text(payload["post_correction_quality"])),
            ("naive (reviewed rows only)", number(payload["naive"]))]
    if payload["horvitz_thompson"] is not None:
        rows.append(("Horvitz-Thompson estimate", number(payload["horvitz_thompson"])))
    if payload["power_tuning"] is not None:
        rows.append(("PPI++ lambda", number(payload["power_tuning"])))
    for stratum in payload["strata"] or ():
        rows.append((f"stratum {stratum['stratum']}",
                     f"rate {stratum['inclusion_probability']:g}: {stratum['audited']:,} of "
                     f"{stratum['auto_accepted']:,} audited, {stratum['errors']:,} errors, {_interval_text(stratum)}"))
    return f"{payload['method']} estimate, {level} intervals\n{named_lines(rows)}"


def estimate(args: argparse.Namespace) -> int:
    """``estimate LOG --method M``: the auto-accepted error rate and the post-correction quality, with intervals."""
    from rpa_sim.operate.monitoring.estimators import estimate as estimated  # noqa: PLC0415
    from rpa_sim.operate.monitoring.log import read_log  # noqa: PLC0415

    result = estimated(read_log(args.log, need_confidence=args.method == "ppi"), method=args.method,
                       confidence_level=args.confidence_level)
    payload = result.to_dict()
    print_text({"table": lambda: _estimate_table(payload), "csv": lambda: csv_text([result.to_row()]),
                "json": lambda: json_text(payload)}[args.format]())
    return 0


def _plan_table(payload: dict[str, Any]) -> str:
    from rpa_sim.common.formatting import money  # noqa: PLC0415

    level = f"{payload['confidence_level'] * 100:g}%"
    cost = "" if payload["cost"] is None else f", cost {money(payload['cost'])}"
    head = (f"audit plan for {payload['policy']} at threshold {payload['threshold']:g}: {payload['audits']:,} audits "
            f"of {payload['auto_accepted']:,} auto-accepted items{cost}\n"
            f"expected width at {level}: {number(payload['expected_width'])} (a uniform audit of as many: "
            f"{number(payload['uniform_width'])}; the exact stratified interval: {number(payload['exact_width'])})")
    names = ["band", "auto-accepted", "prior error", "audits", "rate"]
    rows = [[band["band"], number(band["auto_accepted"]), number(band["prior_error"]), number(band["audits"]),
             number(band["rate"])] for band in payload["bands"]]
    widths = [max(len(cell) for cell in column) for column in zip(names, *rows)]
    lines = ["  ".join(cell.ljust(w) if index == 0 else cell.rjust(w)
                       for index, (cell, w) in enumerate(zip(line, widths))) for line in [names, *rows]]
    return head + "\n" + "\n".join(lines)


@shows_progress
def plan_audit(args: argparse.Namespace) -> int:
    """``plan-audit DATA --policy POLICY --threshold T``: audits per confidence band (Neyman allocation)."""
    from rpa_sim.common.files import atomic_write_text, check_output  # noqa: PLC0415
    from rpa_sim.operate.monitoring.planning import plan_audit as planned_audit  # noqa: PLC0415
    from rpa_sim.route.policies import load_policy  # noqa: PLC0415

    if args.out is not None:
        check_output(args.out)
    policy = load_policy(args.policy)
    evaluated = evaluate_data(args)
    with stage("planning the audit"):
        try:
            planned = planned_audit(evaluated, policy, threshold=args.threshold, target_width=args.target_width,
                                    budget=args.budget, bands=args.bands, confidence_level=args.confidence_level,
                                    cost_per_audit=args.cost_per_audit)
        except InputError:
            raise
        except ValueError as problem:  # the options' values, such as a cost per audit that overflows the cost
            raise usage_error("plan-audit", str(problem)) from None
    payload = planned.to_dict()
    text = {"table": lambda: _plan_table(payload), "csv": lambda: csv_text(payload["bands"]),
            "json": lambda: json_text(payload)}[args.format]()
    if args.out is not None:
        atomic_write_text(args.out, planned.to_yaml())
        say(f"wrote {args.out}")
    print_text(text)
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "replay": replay, "estimate": estimate, "plan-audit": plan_audit}
