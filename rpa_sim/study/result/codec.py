"""Reading and writing ``summary.json`` files: a :class:`~rpa_sim.study.result.summary.StudySummary` encoded.

The summary is built typed by the study; this module only moves it to and from
files. Reading names the file in its message, as every input error does::

    rpa-sim: error: out/summary.json: policies[1].cost_optimum.threshold: expected a number, got a string: "0.5"
"""

from __future__ import annotations

from pathlib import Path

from rpa_sim.common.errors import InputError
from rpa_sim.common.inputs import read_input
from rpa_sim.study.result.summary import StudySummary

__all__ = ["read_summary", "summary_bytes"]


def read_summary(path: Path) -> StudySummary:
    """The summary a ``summary.json`` file holds, of any schema version this rpa-sim reads.

    Raises
    ------
    InputError
        When the file cannot be read, or is no summary (:meth:`StudySummary.from_json`), naming the file.
    """
    text = read_input(path)
    try:
        return StudySummary.from_json(text)
    except InputError as problem:  # it names the key, not the file
        raise InputError(str(problem), path=str(path)) from None


def summary_bytes(summary: StudySummary) -> bytes:
    """The bytes of ``summary.json`` for a summary (UTF-8), as ``rpa-sim run --out-dir`` writes them."""
    return summary.to_json().encode("utf-8")
