"""``replay SCENARIO --days N --out-dir DIR``: a scenario's stream, a log a day under its changes (docs/live.md).

The scenario's ``stream:`` section says everything (policy and threshold, else
the study's decision; audit; reviewers; documents a day; sources; changes), so
the options of ``replay DATA`` are refused with ``--days``, but ``--seed``, which
draws another stream. The day logs (``YYYY-MM-DD.jsonl``) and ``stream.json``
(the settings and what each change plants) are written all or none, a day at a
time. A folder holding day logs this stream would not write is refused: ``watch
DIR`` would read them too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rpa_sim.cli.options import usage_error
from rpa_sim.common.errors import InputError
from rpa_sim.common.progress import stage

__all__ = ["replay_stream", "MANIFEST"]

#: The file beside the day logs that says what the stream is and what each change plants.
MANIFEST = "stream.json"
# replay DATA's options, which a scenario's stream section says for itself
_DATA_OPTIONS = (("policy", "--policy"), ("threshold", "--threshold"), ("audit_rate", "--audit-rate"),
                 ("audit_plan", "--audit-plan"), ("miss_rate", "--miss-rate"),
                 ("false_correction_rate", "--false-correction-rate"), ("day", "--day"), ("out", "--out"),
                 ("predictions", "--predictions"), ("task", "--task"), ("value_match", "--value-match"),
                 ("alpha", "--alpha"))


def _refuse_data_options(args: argparse.Namespace) -> None:
    given = [option for dest, option in _DATA_OPTIONS if getattr(args, dest) is not None]
    if args.skip_invalid:
        given.append("--skip-invalid")
    if given:
        raise usage_error("replay", f"--days replays a scenario's stream, whose stream: section says how: "
                                    f"{', '.join(given)} {'goes' if len(given) == 1 else 'go'} with replay DATA")
    if args.out_dir is None:
        raise usage_error("replay", "--days writes a log a day into a folder: give --out-dir DIR")


def _stale_logs(folder: Path, names: set[str]) -> list[str]:
    """The day logs in ``folder`` that this stream does not write."""
    from rpa_sim.operate.live.reader import LOG_SUFFIXES  # noqa: PLC0415

    if not folder.is_dir():
        return []
    return sorted(path.name for path in folder.iterdir()
                  if path.name.endswith(LOG_SUFFIXES) and not path.name.startswith(".") and path.name not in names)


def replay_stream(args: argparse.Namespace) -> int:
    """``replay SCENARIO --days N --out-dir DIR`` (module docstring)."""
    from rpa_sim.cli.scenarios import scenario_evaluation  # noqa: PLC0415
    from rpa_sim.common import jsontext  # noqa: PLC0415
    from rpa_sim.common.files import all_or_nothing, atomic_write_bytes, check_output_folder  # noqa: PLC0415
    from rpa_sim.common.typedjson import encoded  # noqa: PLC0415
    from rpa_sim.evaluate.sources import names_data  # noqa: PLC0415
    from rpa_sim.operate.monitoring.log import write_log  # noqa: PLC0415
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    _refuse_data_options(args)
    source = str(args.data)
    if names_data(source):
        raise usage_error("replay", f"--days replays a scenario's stream, and {source} names data: give a scenario "
                                    f"with a stream: section")
    folder = check_output_folder(args.out_dir)
    scenario, base = load_scenario(source)
    if scenario.stream is None:
        raise InputError(f"scenario {scenario.name!r} has no stream: section: replay --days draws the days it "
                         f"describes (docs/live.md, \"Streams to study it on\")", path=source)
    from rpa_sim.bundled import resolve  # noqa: PLC0415
    from rpa_sim.common.yamlfile import settings_located  # noqa: PLC0415
    from rpa_sim.study.run import evaluate_scenario_data, run_study, scenario_policies  # noqa: PLC0415
    from rpa_sim.study.stream import audit_text, scenario_stream  # noqa: PLC0415

    policies = scenario_policies(scenario, base)
    with scenario_evaluation(args, scenario), stage(f"evaluating {scenario.name}'s data"):
        table = evaluate_scenario_data(scenario, base, f"scenario {scenario.name!r}", policies=policies)
    decided: tuple[str | None, float | None] = (None, None)
    if scenario.stream.policy is None:
        with stage(f"deciding {scenario.name}'s policy"):
            decision = run_study(scenario, table, policies).summary.decision
        if decision is not None:
            decided = (decision.policy, decision.threshold)
    with settings_located(str(resolve("scenario", source)), "stream"):
        stream = scenario_stream(scenario, table, policies, decided=decided, days=args.days, seed=args.seed)
    names = [f"{date}.jsonl" for date in stream.dates]
    stale = _stale_logs(folder, set(names))
    if stale:
        shown = ", ".join(stale[:3]) + (", ..." if len(stale) > 3 else "")
        raise usage_error("replay", f"--out-dir {folder} holds day logs this stream does not write ({shown}), which "
                                    f"watch would read with it: give an empty or new folder")
    manifest = {"scenario": scenario.name, "policy": stream.policy.name, "threshold": stream.threshold,
                "audit": audit_text(stream.audit), "start": stream.dates[0], "days": len(stream),
                "documents_per_day": stream.spec.documents_per_day, "seed": stream.spec.seed,
                "segments": list(stream.segments_by),
                "changes": [encoded(entry) for entry in stream.plan.planted]}
    rows = 0
    targets = [folder / name for name in names] + [folder / MANIFEST]
    with stage(f"drawing {len(stream):,} days", total=len(stream)) as advance, all_or_nothing(targets) as staged:
        for day, path in zip(stream, staged):
            rows += write_log(day.log, path)
            advance(1)
        atomic_write_bytes(staged[-1], (jsontext.dumps(jsontext.finite(manifest), indent=2) + "\n").encode("utf-8"))
    print(f"wrote {folder}: {len(stream):,} day logs ({stream.dates[0]} to {stream.dates[-1]}), {rows:,} rows, "
          f"{stream.policy.name} at {stream.threshold:g}, audit {audit_text(stream.audit)}; and {MANIFEST}",
          file=sys.stderr)
    for entry in stream.plan.planted:
        print(f"  {entry.text}" if entry.day else f"  {entry.kind} from day {entry.from_day}: after the stream's "
                                                   f"last day", file=sys.stderr)
    return 0

