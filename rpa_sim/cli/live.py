"""``watch``: a team's logs over days, per segment, with a guarantee over every day (docs/live.md).

The command reads LOGS day by day (:mod:`rpa_sim.operate.live.reader`), feeds
the days to the watcher (:mod:`rpa_sim.operate.live.watch`), optionally
continuing a state file, and prints its typed result
(:class:`~rpa_sim.operate.live.result.WatchResult`): a table one line per
segment then the alarms, CSV one row per segment and day, or JSON. What ``run``
prints of a scenario's stream watched (:func:`stream_text`) shares its lines.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rpa_sim.cli.data import shows_progress
from rpa_sim.cli.options import (
    SCENARIO_WORDS,
    format_arguments,
    guarantee_arguments,
    out_argument,
    output_file,
    size,
    usage_error,
)
from rpa_sim.cli.output import csv_text, json_text, say
from rpa_sim.common import limits
from rpa_sim.common.errors import InputError
from rpa_sim.common.progress import stage

if TYPE_CHECKING:
    from rpa_sim.operate.live.result import Alarm, WatchResult
    from rpa_sim.operate.queue.summary import OperationModel
    from rpa_sim.operate.stream.watched import StreamResult

__all__ = ["COMMANDS", "add_parsers", "watch_table", "watch_rows", "segment_lines", "stream_text"]

# the columns a segment may be made of (rpa_sim.operate.monitoring.log.SEGMENT_COLUMNS, without importing numpy)
_SEGMENT_COLUMNS = ("document_type", "source", "key")
_WIDTH = 80


def _segments(text: str) -> tuple[str, ...]:
    """An argparse type: comma-separated segment columns, each known, none twice."""
    columns = tuple(part.strip() for part in text.split(","))
    for column in columns:
        if column not in _SEGMENT_COLUMNS:
            raise argparse.ArgumentTypeError(f"expected columns among {', '.join(_SEGMENT_COLUMNS)} (comma-separated), "
                                             f"got {text!r}")
    if len(set(columns)) < len(columns):
        raise argparse.ArgumentTypeError(f"a column is named twice in {text!r}")
    return columns


def add_parsers(commands: Any) -> None:
    """The parser of ``watch``, added to ``commands``."""
    watch = commands.add_parser("watch", help="production logs over days, per segment: whether the error rate of "
                                              "what goes straight through still meets the target, with a guarantee "
                                              "over every day, and what to do when not (docs/live.md)")
    watch.add_argument("logs", metavar="LOGS",
                       help="the production logs (docs/monitoring.md, with a day or received_at on every row): a "
                            "file, a folder of them (its *.jsonl and *.jsonl.gz files) or a quoted glob such as "
                            "'logs/*.jsonl.gz'; read in day order")
    guarantee_arguments(watch, delta=0.05, delta_means="here, that watch ever raises an alarm when every segment "
                                                       "meets --max-error on every day")
    watch.add_argument("--segments", type=_segments, default=("document_type",), metavar="COLS",
                       help="the columns whose values make a segment, comma-separated, among document_type, source "
                            "and key (default: document_type)")
    watch.add_argument("--horizon-days", type=size("days", most=limits.MOST_MONITORED_DAYS, least=1,
                                                   limited_by="a fixed ceiling"), default=365, metavar="N",
                       help="the days over which detection is fastest; the guarantee holds on every day whatever "
                            "N (default: 365)")
    watch.add_argument("--state", type=output_file, metavar="FILE",
                       help="continue the run this state file holds (when it exists), then write it back "
                            "atomically: a daily run then reads only the new day's log and prints what one run over "
                            "every day would (default: none)")
    watch.add_argument("--scenario", metavar="SCENARIO",
                       help=f"{SCENARIO_WORDS}, with an operations: section: proposals then say the reviewers they "
                            f"take (default: none)")
    format_arguments(watch, what="the result (csv: one row per segment and day)")
    out_argument(watch, required=False, what="the result in this file instead of printed", default_help="print it")


def _operations(name: str) -> tuple[OperationModel, str]:
    """The scenario's review operation for proposals, and a fingerprint the state keeps."""
    import hashlib  # noqa: PLC0415

    from rpa_sim.operate.queue.summary import OperationModel  # noqa: PLC0415
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    scenario, _ = load_scenario(name)
    if scenario.operations is None:
        raise InputError(f"watch: scenario {name} has no operations: section (arrivals, reviewers, service level); "
                         f"see docs/operations.md")
    if scenario.operations.arrivals.from_records or scenario.operations.handling.from_records:
        raise InputError(f"watch: scenario {name}: operations: takes its arrivals or handling times from the records; "
                         f"watch needs them stated (per_hour, hourly or weekly; per_document, per_item)")
    try:
        model = OperationModel(scenario.operations, documents=1, reviewer=scenario.reviewer, costs=scenario.costs)
    except ValueError as problem:
        raise InputError(f"watch: scenario {name}: operations: {problem}") from None
    text = scenario.operations.model_dump_json() + scenario.reviewer.model_dump_json()
    return model, hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@shows_progress
def watch(args: argparse.Namespace) -> int:
    """``watch LOGS --max-error SHARE``: per segment and day, the error rate against the target, and the alarms."""
    from rpa_sim.common.files import atomic_write_files, check_output  # noqa: PLC0415
    from rpa_sim.operate.live.reader import log_files, read_days  # noqa: PLC0415
    from rpa_sim.operate.live.state import read_state, state_text  # noqa: PLC0415
    from rpa_sim.operate.live.watch import Watcher, WatchSettings  # noqa: PLC0415

    if args.out is not None and args.state is not None and args.out.resolve() == args.state.resolve():
        raise usage_error("watch", f"--out {args.out} is --state {args.state}: give them different files")
    for output in (args.out, args.state):
        if output is not None:
            check_output(output)
    operations, staffing = _operations(args.scenario) if args.scenario is not None else (None, None)
    settings = WatchSettings(max_error=args.max_error, delta=args.delta, segments_by=args.segments,
                             horizon_days=args.horizon_days, staffing=staffing)
    if args.state is not None and args.state.exists():
        watcher = read_state(args.state, settings, operations=operations)
    else:
        watcher = Watcher(settings, operations=operations)
    files = log_files(args.logs)
    with stage("reading the logs, day by day") as advance:
        for day in read_days(files, segments_by=settings.segments_by, after=watcher.days[-1] if watcher.days else None):
            watcher.add_day(day.day, day.tallies, day.volume)
            advance(1)
    result = watcher.result()
    text = {"table": lambda: watch_table(result), "csv": lambda: csv_text(watch_rows(result)),
            "json": lambda: json_text(result.to_dict())}[args.format]()
    text = text if text.endswith("\n") else text + "\n"
    outputs: dict[str | os.PathLike[str], bytes] = {}
    if args.state is not None:
        outputs[args.state] = state_text(watcher).encode("utf-8")
    if args.out is not None:
        outputs[args.out] = text.encode("utf-8")
    atomic_write_files(outputs)
    for path in outputs:
        say(f"wrote {path}")
    if args.out is None:
        sys.stdout.write(text)
    return 0


# --------------------------------------------------------------------------- what is printed


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "~"


def _alarm_text(alarm: Alarm, name: str) -> str:
    interval = f"{_rate(alarm.estimate)} [{_rate(alarm.low)}, {_rate(alarm.high)}]"
    if alarm.kind == "calibration_contradicted":
        body = (f"calibration contradicted: since {alarm.since}, {alarm.errors_found:,} errors in "
                f"{alarm.audited:,} audits where it predicted {alarm.predicted_errors or 0.0:,.1f}; the label-free "
                f"figure is withdrawn")
    else:
        what = "error above target" if alarm.kind == "error_above_target" else "room to automate"
        body = (f"{what}: since {alarm.since}, {alarm.errors_found:,} errors in {alarm.audited:,} audits of "
                f"{alarm.auto_accepted:,} auto-accepted, error rate {interval}")
        if alarm.never_audited:
            body += f"; {alarm.never_audited:,} of them could never be audited (inclusion probability 0)"
    if alarm.proposal is not None:
        body += f". Proposal: {alarm.proposal.reason}"
        if alarm.proposal.reviewers_needed is not None:
            body += f" (reviewers at the busiest hour: {alarm.proposal.reviewers_now} -> " \
                    f"{alarm.proposal.reviewers_needed})"
    return textwrap.fill(f"{alarm.day}  {name}: {body}", width=_WIDTH, subsequent_indent=" " * 12)


def segment_lines(result: WatchResult) -> list[str]:
    """A line per segment under a header, at 80 columns: its status on the last day, its error rate with the
    interval, its first alarm and what to do now."""
    from rpa_sim.operate.live.result import segment_name  # noqa: PLC0415

    lines = [f"{'segment':<15}  {'status':<13}  {'error [low, high]':<20}  {'1st alarm':<10}  proposal"]
    for timeline in result.segments:
        last = timeline.days[-1]
        interval = f"{_rate(last.estimate)} [{_rate(last.low)}, {_rate(last.high)}]"
        proposal = "-" if timeline.proposal is None else timeline.proposal.short
        lines.append(f"{_cut(segment_name(timeline.segment), 15):<15}  {timeline.status:<13}  {interval:<20}  "
                     f"{timeline.first_alarm or '-':<10}  {proposal}")
    return lines


def watch_table(result: WatchResult) -> str:
    """The result for reading at 80 columns: the run, the guarantee, a line per segment, then the alarms."""
    from rpa_sim.operate.live.result import segment_name  # noqa: PLC0415

    days = result.days
    head = (f"watch: {len(days):,} days ({days[0]} to {days[-1]}), {len(result.segments):,} segments by "
            f"{', '.join(result.segments_by)}; max error {result.max_error:g}, delta {result.delta:g}")
    lines = [*textwrap.wrap(head, _WIDTH), *textwrap.wrap(result.guarantee, _WIDTH), "", *segment_lines(result)]
    free = [f"{segment_name(t.segment)} {_rate(t.days[-1].label_free)}" for t in result.segments
            if t.days[-1].label_free is not None]
    withdrawn = [segment_name(t.segment) for t in result.segments if t.calibration == "contradicted"]
    if free or withdrawn:
        text = "label-free error rate on the last day (assumes calibration): " + (", ".join(free) or "none")
        if withdrawn:
            text += f"; withdrawn, calibration contradicted: {', '.join(withdrawn)}"
        lines += ["", *textwrap.wrap(text, _WIDTH)]
    lines += ["", f"alarms ({len(result.alarms):,})" if result.alarms else "alarms: none"]
    lines += [_alarm_text(alarm, segment_name(alarm.segment)) for alarm in result.alarms]
    return "\n".join(lines)


def watch_rows(result: WatchResult) -> list[dict[str, Any]]:
    """One row per segment and day: the segment's columns, then the day's figures (alarms joined by ``;``)."""
    rows = []
    for timeline in result.segments:
        for day in timeline.days:
            figures = day.to_dict()
            figures["alarm"] = ";".join(day.alarm)
            rows.append({**dict(timeline.segment), **figures})
    return rows


def stream_text(result: StreamResult) -> str:
    """What ``run`` prints of a scenario's stream, at 80 columns: the stream, per change the day it happened,
    what it planted and the day it was caught (and by which alarm), the guarantee, and the segments' status."""
    watch = result.watch
    head = (f"Stream: {result.policy} at τ {result.threshold:g} for {result.days:,} days from {result.start} "
            f"({result.documents_per_day:,} documents a day, audit {result.audit}), watched per "
            f"{', '.join(watch.segments_by)} against a max error of {watch.max_error:g}")
    lines = [*textwrap.wrap(head, 80), ""]
    for change in result.changes:
        lines += textwrap.wrap(change.planted.text or f"{change.planted.kind} from day {change.planted.from_day}",
                               80, subsequent_indent="  ")
        lines += textwrap.wrap(f"-> {change.text}", 80, initial_indent="  ", subsequent_indent="     ")
    return "\n".join([*lines, "", *textwrap.wrap(watch.guarantee, 80), "", *segment_lines(watch)])


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"watch": watch}
