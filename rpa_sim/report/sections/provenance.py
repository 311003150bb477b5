"""The detail "Provenance", last on the page: rpa-sim's version, the scenario and where it came from, the data
(its generator, or each file's sha256) and the command that reproduces the report. No date: the same inputs
give the same bytes."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from rpa_sim.bundled import is_path
from rpa_sim.report.html import escape
from rpa_sim.study.scenario import bundled_scenarios
from rpa_sim.version import __version__

if TYPE_CHECKING:
    from rpa_sim.study.run import ScenarioResult

__all__ = ["provenance_section"]


def provenance_section(result: ScenarioResult, scenario_source: str | None) -> list[str]:
    """Where the figures come from: rpa-sim's version, the scenario, the data (hashed) and the command."""
    scenario = result.scenario
    if scenario_source is None and _is_bundled(scenario.name, result.base):
        scenario_source = scenario.name
    if scenario_source is None:
        where = "not recorded: the report was not told which file the scenario came from"
        command = "rpa-sim report SCENARIO --out report.html"
    else:
        where = (f"file {scenario_source}" if is_path(scenario_source)
                 else f"bundled with rpa-sim ({scenario_source}.yaml)")
        command = f"rpa-sim report {shlex.quote(scenario_source)} --out report.html"
    rows = [("rpa-sim version", escape(__version__)),
            ("scenario", f"{escape(scenario.name)}, {escape(where)}"),
            *_data_provenance(result)]
    rows.append(("reproduce with", f"<code>{escape(command)}</code>"))
    body = "".join(f"<tr><th scope=\"row\">{label}</th><td>{value}</td></tr>\n" for label, value in rows)
    return [
        "<h2>Provenance</h2>",
        '<p class="explain">What this report was made from. It holds no date: the same version, scenario and '
        "data give the same bytes, whatever the output file is called.</p>",
        f'<div class="scroll" role="region" tabindex="0" aria-label="provenance table">\n<table id="provenance">'
        f"\n<tbody>\n{body}</tbody>\n</table>\n</div>",
    ]


def _is_bundled(name: str, base: Path | None) -> bool:
    """Whether a scenario of this name read from ``base`` is the bundled one (its folder is the bundled folder)."""
    bundled = bundled_scenarios().get(name)
    return bundled is not None and base is not None and Path(str(bundled)).parent == base


def _data_provenance(result: ScenarioResult) -> list[tuple[str, str]]:
    """The data's rows of the provenance: the generator and its settings, or each file and its sha256."""
    data = result.scenario.data
    if data.generate is not None:
        settings = json.dumps(data.settings, sort_keys=True) if data.settings else "the defaults"
        return [("data", f"generated: {escape(data.generate)}, n = {data.n}, seed = {data.seed}, settings "
                         f"{escape(settings)}")]
    rows = []
    for label, name in (("data", data.file), ("predictions", data.predictions)):
        if name is None:
            continue
        if result.base is None:
            rows.append((label, f"file {escape(name)} (not hashed: the report was given the evaluated table)"))
            continue
        digest = _sha256(result.base / name)
        rows.append((label, f"file {escape(name)}, " + ("unreadable now" if digest is None
                                                       else f"sha256 <code>{digest}</code>")))
    return rows


def _sha256(path: Path) -> str | None:
    """The file's sha256 in hex, None when it cannot be read (moved or deleted since the run)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()

