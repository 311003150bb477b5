"""An output never replaces an input: the files a command line names, compared before any work (docs/cli.md)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rpa_sim.common.errors import InputError, UsageError

if TYPE_CHECKING:
    from rpa_sim.bundled import Kind

__all__ = ["refuse_replacing_inputs"]


def _named_outputs(args: argparse.Namespace) -> list[tuple[str, str | Path]]:
    """The files the command line asks to write (evaluate's ``--out DIR/``: a folder replaced whole)."""
    outputs: list[tuple[str, str | Path]] = []
    if args.command in ("evaluate", "sweep", "plan-audit", "generate", "import", "report", "export-policy",
                        "replay", "watch") and args.out is not None:
        outputs.append((getattr(args, "spellings", {}).get("out", "--out"), args.out))
    if getattr(args, "review_log", None) is not None:
        outputs.append(("--review-log", args.review_log))
    if args.command == "watch" and args.state is not None:
        outputs.append(("--state", args.state))
    # only a folder that exists can hold a file to replace; the modules that name the files are heavy to import
    if args.command == "run" and args.out_dir is not None and args.out_dir.is_dir():
        from rpa_sim.study.run import OUTPUT_FILES  # noqa: PLC0415

        outputs += [("--out-dir file", args.out_dir / name) for name in OUTPUT_FILES]
    if args.command == "replay" and args.out_dir is not None and args.out_dir.is_dir():
        from rpa_sim.cli.streams import MANIFEST  # noqa: PLC0415
        from rpa_sim.operate.live.reader import LOG_SUFFIXES  # noqa: PLC0415

        # the day logs a stream writes are named by dates the scenario sets: every log there, and the manifest
        outputs += [("--out-dir file", path) for path in sorted(args.out_dir.iterdir())
                    if path.name.endswith(LOG_SUFFIXES) or path.name == MANIFEST]
    if args.command == "report" and args.png_dir is not None and args.png_dir.is_dir():
        from rpa_sim.report.page import PLOT_NAMES  # noqa: PLC0415

        outputs += [("--png-dir file", args.png_dir / f"{name}.png") for name in PLOT_NAMES]
    return outputs


def _shards(data: Path) -> tuple[Path, ...]:
    from rpa_sim.evaluate.sources import resolve_shards  # noqa: PLC0415

    try:
        return resolve_shards(data)
    except InputError:  # the command says why when it reads DATA
        return ()


def _logs(logs: str) -> tuple[Path, ...]:
    from rpa_sim.operate.live.reader import log_files  # noqa: PLC0415

    try:
        return log_files(logs)
    except InputError:  # the command says why when it reads LOGS
        return ()


def _yaml_file(kind: Kind, name: str, base: Path | None = None) -> tuple[Path, ...]:
    """The file a policy or scenario name stands for (a bundled one too), or none when there is none."""
    from rpa_sim.bundled import resolve  # noqa: PLC0415

    try:
        return (Path(str(resolve(kind, name, relative_to=base))),)
    except InputError:  # the command says why when it reads it
        return ()


def _scenario_inputs(name: str) -> Iterator[tuple[str, Path]]:
    """The scenario file and every file it names: its data's shards, predictions and policy files."""
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    yield from (("SCENARIO", file) for file in _yaml_file("scenario", name))
    try:
        scenario, base = load_scenario(name)
    except InputError:  # the command says why when it loads it
        return
    if scenario.data.file is not None:
        yield from (("the scenario's data", shard) for shard in _shards(base / scenario.data.file))
    if scenario.data.predictions is not None:
        yield "the scenario's predictions", base / scenario.data.predictions
    for entry in scenario.policies:
        if isinstance(entry, str):
            yield from (("the scenario's policy", file) for file in _yaml_file("policy", entry, base))


def _named_inputs(args: argparse.Namespace) -> Iterator[tuple[str, Path]]:
    """Every file the command line reads; found only when asked for, that is when an output exists already."""
    if args.command == "replay" and args.days is not None:  # DATA is a scenario, whose stream is replayed
        yield from _scenario_inputs(str(args.data))
    elif getattr(args, "data", None) is not None:
        yield from (("DATA", shard) for shard in _shards(args.data))
    if args.command == "watch":
        yield from (("LOGS", log) for log in _logs(args.logs))
    for dest, label in (("predictions", "--predictions"), ("audit_plan", "--audit-plan"), ("settings", "--settings"),
                        ("source", "SRC"), ("ground_truth", "--ground-truth"), ("fields", "--fields"),
                        ("mapping", "--mapping"), ("from_summary", "--from")):
        if getattr(args, dest, None) is not None:
            yield label, Path(getattr(args, dest))
    policies = getattr(args, "policy", None)
    for policy in [policies] if isinstance(policies, str) else policies or ():
        yield from (("--policy", file) for file in _yaml_file("policy", policy))
    if getattr(args, "scenario", None) is not None:
        yield from _scenario_inputs(args.scenario)


def refuse_replacing_inputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output that is one of the command's inputs: bad usage (docs/cli.md)."""
    from rpa_sim.common.files import OutputIsInputError, refuse_overwriting_inputs  # noqa: PLC0415

    try:
        refuse_overwriting_inputs(_named_outputs(args), _named_inputs(args))
    except OutputIsInputError as clash:
        raise UsageError(str(clash)) from None
