"""The commands on a scenario: ``run``, ``report``, ``dashboard`` and ``demo`` (a bundled scenario)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from rpa_sim.cli.data import shows_progress
from rpa_sim.cli.options import (
    NAMES_HELP,
    SCENARIO_WORDS,
    evaluation_arguments,
    folder_argument,
    format_arguments,
    out_argument,
)
from rpa_sim.cli.output import csv_text, print_result, say
from rpa_sim.common.errors import UsageError
from rpa_sim.common.progress import stage

if TYPE_CHECKING:
    from rpa_sim.study.run import ScenarioResult
    from rpa_sim.study.scenario import Scenario

__all__ = ["COMMANDS", "DEMO_SCENARIO", "add_parsers", "interactive", "scenario_evaluation"]

DEMO_SCENARIO = "receipts-demo"


def add_parsers(commands: Any) -> None:
    """The parsers of ``demo``, ``run``, ``report`` and ``dashboard``, added to ``commands``."""
    demo = commands.add_parser("demo", help=f"the bundled scenario ({DEMO_SCENARIO}): the dashboard in a terminal, "
                                             "else its comparison as text")
    shown = format_arguments(demo, what="the comparison", default=None,
                             default_help="the dashboard in a terminal, else table")
    shown.add_argument("--text", action="store_const", const="table", dest="format",
                       help="same as --format table: the comparison as a table even in a terminal")

    run = commands.add_parser("run", help="everything a scenario asks for: curves, comparison, costs",
                              epilog=NAMES_HELP)
    run.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_WORDS)
    folder_argument(run, "--out-dir", "--out", what="also write curves.csv and summary.json into this folder",
                    default_help="write nothing")
    format_arguments(run, what="the comparison (json: the whole summary)")
    evaluation_arguments(run, scenario=True)

    report = commands.add_parser("report", help="a self-contained HTML report of a scenario, with its plots",
                                 epilog=NAMES_HELP)
    report.add_argument("scenario", metavar="SCENARIO", help=SCENARIO_WORDS)
    out_argument(report, what="the HTML report")
    folder_argument(report, "--png-dir", "--png", what="also write each plot as a PNG file into this folder",
                    default_help="no PNG")
    evaluation_arguments(report, scenario=True)

    dashboard = commands.add_parser("dashboard", help="the interactive dashboard (Textual) on a scenario or records",
                                    epilog=NAMES_HELP)
    dashboard.add_argument("source", nargs="?", metavar="SCENARIO|DATA",
                           help=f"a scenario (name or YAML), a records file or an outcome table (.parquet) "
                                f"(default: {DEMO_SCENARIO})")
    folder_argument(dashboard, "--out-dir", "--export-dir",
                    what="the folder the dashboard writes exports and screenshots into",
                    default_help="the current folder")
    evaluation_arguments(dashboard, scenario=True)


@contextlib.contextmanager
def scenario_evaluation(args: argparse.Namespace, scenario: Scenario | None) -> Iterator[None]:
    """Evaluate the records of the scenario run inside (``scenario``, or the dashboard's source once opened)
    with the command's ``--workers``, and on its ``--scheduler`` in place of the scenario's ``data:
    scheduler:``. A ``stream:`` setting the stream refuses once the data is read is named with the scenario
    file and its line.

    A command without these options (``demo``, ``staff``) evaluates as the scenario says, on every core.
    """
    from rpa_sim.common.workers import using_workers  # noqa: PLC0415
    from rpa_sim.evaluate.cluster import using_scheduler  # noqa: PLC0415

    scheduler = getattr(args, "scheduler", None)
    if scheduler is None and scenario is not None:
        scheduler = scenario.data.scheduler
    if scheduler is not None and scenario is not None and scenario.data.file is None:
        raise UsageError(f"--scheduler evaluates a scenario's data: file: on Dask, and scenario {scenario.name!r} "
                         f"generates its records")
    with using_scheduler(scheduler), using_workers(getattr(args, "workers", None)), _stream_located(args, scenario):
        yield


@contextlib.contextmanager
def _stream_located(args: argparse.Namespace, scenario: Scenario | None) -> Iterator[None]:
    """The scenario file and line of a ``stream:`` setting that the stream refuses once the data is read."""
    name = getattr(args, "scenario", None)
    if scenario is None or scenario.stream is None or name is None:
        yield
        return
    from rpa_sim.bundled import resolve  # noqa: PLC0415
    from rpa_sim.common.yamlfile import settings_located  # noqa: PLC0415

    with settings_located(str(resolve("scenario", name)), "stream"):
        yield


def _comparison_rows(result: ScenarioResult) -> list[dict[str, Any]]:
    """The comparison table's columns, one row per policy, for CSV."""
    summary = result.summary
    rejecting = any(policy.rejected is not None for policy in summary.policies)
    rows = []
    for policy in summary.policies:
        row: dict[str, Any] = {"policy": policy.policy, "auc": policy.auc}
        for target, point in policy.operating_points.items():
            row[f"auto_rate_at_{target}"] = None if point is None else point.auto_rate
        if rejecting:
            row["rejected"] = policy.rejected or 0
        best = policy.cost_optimum
        if summary.costs is not None and best is not None:  # every policy has its optimum when there are costs
            row.update(best_cost=best.cost, best_cost_threshold=best.threshold,
                       savings_vs_review_all=best.savings_vs_review_all)
        row["certified_threshold"] = None if policy.certified is None else policy.certified.threshold
        row["dominated_by"] = " ".join(policy.dominated_by)
        rows.append(row)
    return rows


@shows_progress
def run(args: argparse.Namespace) -> int:
    """``run SCENARIO``: the study a scenario asks for, its comparison printed (and its files written)."""
    from rpa_sim.common.files import check_output_folder  # noqa: PLC0415
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    if args.out_dir is not None:
        check_output_folder(args.out_dir)
    scenario, base = load_scenario(args.scenario)
    # the study's modules take seconds to import: a scenario refused (a size too large) is refused before
    from rpa_sim.study.run import comparison_table, run_scenario, write_outputs  # noqa: PLC0415
    with scenario_evaluation(args, scenario), stage(f"running {scenario.name}"):
        result = run_scenario(scenario, base)
    # everything computed before anything is written
    summary, form = result.summary, args.format or "table"
    text = {"table": lambda: f"{scenario.name}: {scenario.description}\n\n{comparison_table(result)}",
            "csv": lambda: csv_text(_comparison_rows(result)),
            "json": summary.to_json}[form]()
    if form == "table" and summary.operations is not None:
        from rpa_sim.operate.queue.summary import operations_table  # noqa: PLC0415

        currency = None if summary.costs is None else summary.costs.currency
        text += "\n\n" + operations_table(summary.operations, currency=currency)
    if form == "table" and summary.decision is not None:  # a study run here always decides
        from rpa_sim.study.decision_text import decision_text  # noqa: PLC0415

        text = decision_text(summary) + "\n\n" + text  # the decision first, infeasible or not
    if (args.format or "table") == "table" and summary.stream is not None:  # the scenario's stream: section
        from rpa_sim.cli.live import stream_text  # noqa: PLC0415

        text += "\n\n" + stream_text(summary.stream)
    if args.out_dir is not None:
        for path in write_outputs(result, args.out_dir):
            say(f"wrote {path}")
    print_result(form, {form: lambda: text})
    return 0


@shows_progress
def report(args: argparse.Namespace) -> int:
    """``report SCENARIO --out FILE``: the study as a self-contained HTML page (and its plots as PNG files)."""
    from rpa_sim.common.files import check_output, check_output_folder  # noqa: PLC0415
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    check_output(args.out)
    if args.png_dir is not None:
        check_output_folder(args.png_dir)
    # the HTML is written first: the plots' folder would then be a file, and the command fail with it left behind
    if args.png_dir is not None and args.out.resolve() in (args.png_dir.resolve(), *args.png_dir.resolve().parents):
        raise UsageError(f"report: --png-dir {args.png_dir} is the --out file {args.out} or inside it; the plots "
                         f"need a folder of their own")
    scenario, base = load_scenario(args.scenario)
    from rpa_sim.report.page import write_report  # noqa: PLC0415
    from rpa_sim.study.run import run_scenario  # noqa: PLC0415
    with scenario_evaluation(args, scenario), stage(f"running {scenario.name}"):
        result = run_scenario(scenario, base)
    with stage("drawing the report"):
        path = write_report(result, args.out, png_dir=args.png_dir, scenario_source=args.scenario)
    say(f"wrote {path}")
    return 0


def interactive() -> bool:
    """Whether the command runs in a terminal, both ways: the dashboard needs one."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def demo(args: argparse.Namespace) -> int:
    """``demo``: the bundled scenario, in the dashboard in a terminal, else its comparison as ``run`` prints it."""
    if args.format is None and interactive():
        from rpa_sim.tui import run_dashboard  # noqa: PLC0415

        return run_dashboard(DEMO_SCENARIO)
    args.scenario, args.out_dir = DEMO_SCENARIO, None
    return run(args)


def dashboard(args: argparse.Namespace) -> int:
    """``dashboard [SOURCE]``: the interactive dashboard, which needs a terminal."""
    from rpa_sim.common.files import check_output_folder  # noqa: PLC0415

    if not interactive():
        raise UsageError("dashboard: needs a terminal, and standard input or output is not one; "
                         "'rpa-sim run SCENARIO' prints the comparison as text")
    if args.out_dir is not None:
        check_output_folder(args.out_dir)
    from rpa_sim.evaluate.sources import names_data  # noqa: PLC0415
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415
    from rpa_sim.tui import run_dashboard  # noqa: PLC0415

    # The source is opened inside the app, where a scenario's own data: scheduler: applies unless --scheduler
    # is given; a --scheduler for a scenario that generates its records is refused before the app starts.
    source, scenario = args.source or "receipts-demo", None
    if args.scheduler is not None and not names_data(source):
        scenario, _ = load_scenario(source)
    with scenario_evaluation(args, scenario):
        return run_dashboard(args.source, export_dir=args.out_dir)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": demo, "run": run, "report": report, "dashboard": dashboard}
