"""``staff``: the reviewers a review queue needs, or how a team copes (docs/operations.md)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rpa_sim.cli.data import shows_progress
from rpa_sim.cli.options import (
    OPEN_SHARE,
    POSITIVE,
    POSITIVE_NUMBER,
    SCENARIO_WORDS,
    bounded,
    evaluation_arguments,
    format_arguments,
    seed_argument,
    simulated_hours,
    usage_error,
)
from rpa_sim.cli.output import csv_text, json_text, print_text, table
from rpa_sim.cli.scenarios import scenario_evaluation
from rpa_sim.common import limits
from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.common.progress import stage

__all__ = ["COMMANDS", "add_parsers"]

_STAFF_TABLE_ROWS = ("reviewers", "target_service_level", "offered_load", "tasks", "p_wait", "service_level",
                     "mean_wait_seconds", "occupancy", "p_abandon", "backlog_at_end")


def add_parsers(commands: Any) -> None:
    """The parser of ``staff``, added to ``commands``."""
    staff = commands.add_parser("staff", help="reviewers a review queue needs, or how a team copes: Erlang C/A "
                                              "or a simulation (docs/operations.md)")
    staff.add_argument("scenario", nargs="?", metavar="SCENARIO",
                       help=f"{SCENARIO_WORDS}, with an operations: section: the reviewers each policy needs per hour "
                            f"at its operating points, instead of the queue flags below")
    staff.add_argument("--arrivals-per-hour", type=POSITIVE_NUMBER, metavar="RATE",
                       help="tasks arriving per hour, at random (a Poisson stream), > 0 (default: none; required "
                            "without SCENARIO)")
    staff.add_argument("--handle-seconds", type=POSITIVE_NUMBER, metavar="SECONDS",
                       help="mean time a reviewer takes per task, in seconds (exponential), > 0 (default: none; "
                            "required without SCENARIO)")
    team = staff.add_mutually_exclusive_group()
    team.add_argument("--reviewers", type=POSITIVE, metavar="N",
                      help="the figures of N reviewers on the floor (default: none; without SCENARIO, this or "
                           "--service-level is required)")
    team.add_argument("--service-level", type=OPEN_SHARE, metavar="SHARE",
                      help="the fewest reviewers who answer this share, in (0, 1), of all tasks within --answer-within "
                           "(default: none; without SCENARIO, this or --reviewers is required)")
    staff.add_argument("--answer-within", type=bounded(float, low=0.0), metavar="SECONDS",
                       help="the service level's target: seconds from arrival to the start of review (default: "
                            "none; required without SCENARIO)")
    staff.add_argument("--patience", type=POSITIVE_NUMBER, metavar="SECONDS",
                       help="mean patience of a waiting task, in seconds (exponential): a task waiting longer leaves "
                            "unreviewed; Erlang A (default: none, Erlang C)")
    staff.add_argument("--simulate", action="store_true",
                       help="simulate the queue (one run, same assumptions) instead of the exact formulas; with "
                            "--service-level, the team the formulas size (default: the exact formulas)")
    staff.add_argument("--hours", type=simulated_hours, metavar="HOURS",
                       help=f"with --simulate: hours simulated, > 0 and at most {limits.MOST_SIMULATED_HOURS:,} "
                            f"(a year) (default: 168)")
    seed_argument(staff, what="the simulation (with --simulate)", default=None)
    format_arguments(staff, what="the figures")
    evaluation_arguments(staff, scenario=True)


def _simulated_staff(args: argparse.Namespace, reviewers: int) -> dict[str, Any]:
    from rpa_sim.operate.queue.settings import QueueSettings  # noqa: PLC0415
    from rpa_sim.operate.queue.simulation import simulate_queue  # noqa: PLC0415

    hours = 168.0 if args.hours is None else args.hours
    seed = 0 if args.seed is None else args.seed
    tasks = args.arrivals_per_hour * hours
    if tasks > limits.MOST_SIMULATED_TASKS:
        raise UsageError(f"staff: --simulate would draw about {tasks:,.0f} tasks (--arrivals-per-hour x --hours), "
                         f"more than {limits.MOST_SIMULATED_TASKS:,} (a fixed ceiling for time); shorten --hours")
    limits.require_memory(tasks * limits.SIMULATED_TASK_BYTES,
                          what=f"staff: --simulate's {tasks:,.0f} tasks (--arrivals-per-hour x --hours)")
    patience = None if args.patience is None else {"seconds": args.patience, "distribution": "exponential",
                                                   "on_expiry": "release"}
    settings = QueueSettings(arrivals={"per_hour": args.arrivals_per_hour},
                             handling={"per_task": {"kind": "exponential", "mean_seconds": args.handle_seconds}},
                             reviewers={"count": reviewers}, patience=patience,
                             answer_within_seconds=args.answer_within, hours=hours)
    with stage(f"simulating {hours:g} hours"):
        run = simulate_queue(settings, seed=seed).runs[0]
    load = args.arrivals_per_hour * args.handle_seconds / 3600.0
    note = None
    if args.patience is None and load >= reviewers:
        note = (f"overloaded: {load:.6g} erlangs of work need more than {reviewers} reviewers; the backlog grows "
                f"({' '.join(str(n) for n in run['backlog_at_day_end'])} tasks at the end of each day)")
    figures = ("tasks", "p_wait", "service_level", "mean_wait_seconds", "mean_time_in_queue_seconds",
               "mean_queue_length", "occupancy", "p_abandon", "backlog_at_day_end", "backlog_at_end")
    return {"method": "simulation", "reviewers": reviewers, "arrivals_per_hour": args.arrivals_per_hour,
            "handle_seconds": args.handle_seconds, "answer_within_seconds": args.answer_within,
            "patience_seconds": args.patience, "offered_load": load, "hours": hours, "seed": seed,
            **{name: run[name] for name in figures}, "note": note}


def _staff_scenario(args: argparse.Namespace) -> int:
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    given = [flag for flag, value in (("--arrivals-per-hour", args.arrivals_per_hour),
                                      ("--handle-seconds", args.handle_seconds),
                                      ("--answer-within", args.answer_within),
                                      ("--reviewers", args.reviewers), ("--service-level", args.service_level),
                                      ("--patience", args.patience), ("--simulate", args.simulate or None),
                                      ("--hours", args.hours), ("--seed", args.seed)) if value is not None]
    if given:
        raise usage_error("staff", f"{given[0]} describes a queue by itself; with a SCENARIO the queue is its "
                                   f"operations: section")
    scenario, base = load_scenario(args.scenario)
    if scenario.operations is None:
        raise InputError(f"staff: scenario {args.scenario} has no operations: section (arrivals, reviewers, "
                         f"service level); see docs/operations.md")
    from rpa_sim.common.typedjson import encoded  # noqa: PLC0415
    from rpa_sim.operate.queue.summary import staffing_rows, staffing_table  # noqa: PLC0415
    from rpa_sim.study.run import run_scenario  # noqa: PLC0415
    with scenario_evaluation(args, scenario), stage(f"running {scenario.name}"):
        operations = run_scenario(scenario, base).summary.operations
    assert operations is not None, "a scenario with an operations: section has its operations figures"
    print_text({"table": lambda: staffing_table(operations), "csv": lambda: csv_text(staffing_rows(operations)),
                "json": lambda: json_text(encoded(operations))}[args.format]())
    return 0


def _staff_table(payload: dict[str, Any]) -> str:
    title = {"erlang-c": "Erlang C (M/M/c)", "erlang-a": "Erlang A (M/M/c+M)"}.get(
        payload["method"], f"simulation of {payload.get('hours', 0):g} hours (seed {payload.get('seed')})")
    text = f"{title}\n{table([(name, payload[name]) for name in _STAFF_TABLE_ROWS if name in payload])}"
    return text if payload["note"] is None else f"{text}\n{payload['note']}"


@shows_progress
def staff(args: argparse.Namespace) -> int:
    """``staff``: a queue's figures for a team (Erlang C/A, or simulated), the team a service level needs, or
    (``staff SCENARIO``) the reviewers each policy of a scenario needs per hour."""
    from rpa_sim.operate.queue.erlang import queue_figures  # noqa: PLC0415
    from rpa_sim.operate.queue.staffing import required_reviewers  # noqa: PLC0415

    if args.scenario is not None:
        return _staff_scenario(args)
    scenario_only = [flag for flag, value in (("--workers", args.workers), ("--scheduler", args.scheduler))
                     if value is not None]
    if scenario_only:
        raise usage_error("staff", f"{scenario_only[0]} evaluates a SCENARIO's records, and none is given")
    missing = [flag for flag, value in (("--arrivals-per-hour", args.arrivals_per_hour),
                                        ("--handle-seconds", args.handle_seconds),
                                        ("--answer-within", args.answer_within)) if value is None]
    if missing:
        raise usage_error("staff", f"the following arguments are required: {', '.join(missing)} (or a SCENARIO)")
    if args.reviewers is None and args.service_level is None:
        raise usage_error("staff", "one of the arguments --reviewers --service-level is required")
    if not args.simulate and (args.hours is not None or args.seed is not None):
        raise usage_error("staff", "--hours and --seed go with --simulate")
    load = args.arrivals_per_hour * args.handle_seconds / 3600.0
    if (args.reviewers or 0) > limits.MOST_REVIEWERS:
        raise UsageError(f"staff: --reviewers {args.reviewers:,} is more than the {limits.MOST_REVIEWERS:,} this "
                         f"command takes")
    if load > limits.MOST_REVIEWERS:
        raise UsageError(f"staff: {load:,.6g} erlangs of work (--arrivals-per-hour x --handle-seconds / 3600) need "
                         f"more than the {limits.MOST_REVIEWERS:,} reviewers this command takes")
    queue = {"arrivals_per_hour": args.arrivals_per_hour, "handle_seconds": args.handle_seconds,
             "answer_within_seconds": args.answer_within, "patience_seconds": args.patience}
    reviewers, figures = args.reviewers, None
    try:
        if reviewers is None:
            figures = required_reviewers(**queue, service_level=args.service_level).figures
            reviewers = figures.reviewers
        elif not args.simulate:
            figures = queue_figures(**queue, reviewers=reviewers)
    except ValueError as problem:
        raise InputError(f"staff: {problem}") from None
    payload = _simulated_staff(args, reviewers) if args.simulate or figures is None else figures.to_dict()
    if args.service_level is not None:
        payload = {"target_service_level": args.service_level, **payload}
    row = {name: " ".join(map(str, value)) if isinstance(value, list) else value for name, value in payload.items()}
    print_text({"table": lambda: _staff_table(payload), "csv": lambda: csv_text([row]),
                "json": lambda: json_text(payload)}[args.format]())
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"staff": staff}
