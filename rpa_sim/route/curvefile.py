"""Reading ``curves.csv`` back: the curves :func:`~rpa_sim.route.sweep.curves_to_csv` wrote (``rpa-sim run
--out-dir``), one :class:`~rpa_sim.route.sweep.Curve` per policy, so that a saved study can be drawn again
(:mod:`rpa_sim.report.displays`) without running it.

A curve read back has every column of the file as floats (an empty cell, a figure without a finite value, is
NaN) and no cost basis: what is priced is in its ``cost`` column, not how.

Examples
--------
>>> from rpa_sim.route.sweep import curves_to_csv
>>> text = curves_to_csv([Curve("p", "vqa", {"threshold": np.array([0.5, 1.0]), "auto_rate": np.array([1.0, 0.0]),
...                                          "reviewed": np.array([0.0, 2.0]),
...                                          "documents_straight_through": np.array([2.0, 0.0]),
...                                          "anls": np.array([0.9, 1.0]), "accuracy": np.array([0.5, 1.0]),
...                                          "smudge": np.array([np.nan, np.nan])})])
>>> [curve] = curves_from_csv(text, task="vqa")
>>> curve.policy, curve.threshold.tolist(), curve.metric.tolist(), bool(np.isnan(curve.columns["smudge"]).all())
('p', [0.5, 1.0], [0.9, 1.0], True)
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from rpa_sim.common.errors import InputError
from rpa_sim.common.inputs import read_input
from rpa_sim.evaluate.outcomes import table_type
from rpa_sim.route.sweep import Curve

__all__ = ["curves_from_csv", "read_curves"]


def curves_from_csv(text: str, *, task: str, source: str = "curves.csv") -> list[Curve]:
    """The curves of a ``curves.csv`` text, in the file's order of policies; ``task`` (``kie`` or ``vqa``, the
    summary's) names the metric column; ``source`` names the file in messages.

    Raises
    ------
    InputError
        When the header lacks a column a curve needs, a row has another number of cells than the header, a
        cell is not a number, or a policy's rows are not together (the message names the line).
    """
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    needed = ["policy", "threshold", "auto_rate", table_type(task).metric_name]
    if header is None or [name for name in needed if name not in header]:
        missing = needed if header is None else [name for name in needed if name not in header]
        raise InputError(f"the header lacks {', '.join(missing)}: not the curves of a {task} study", path=source,
                         line=1)
    if header[0] != "policy":
        raise InputError(f"the first column is {header[0]!r}, not 'policy'", path=source, line=1)
    columns: dict[str, list[list[float]]] = {}
    last = None
    for line, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise InputError(f"{len(row)} cells, and the header has {len(header)}", path=source, line=line)
        policy = row[0]
        if policy != last and policy in columns:
            raise InputError(f"the rows of policy {policy!r} are not together", path=source, line=line)
        last = policy
        values = columns.setdefault(policy, [])
        values.append([_number(cell, name, source, line) for name, cell in zip(header[1:], row[1:])])
    return [Curve(policy, task, {name: np.array(column, dtype=np.float64)
                                 for name, column in zip(header[1:], zip(*values))})
            for policy, values in columns.items()]


def read_curves(path: Path, *, task: str) -> list[Curve]:
    """The curves of a ``curves.csv`` file (:func:`curves_from_csv`), read within the input size bound.

    Raises
    ------
    InputError
        When the file cannot be read, is not UTF-8, or is not the curves of a study of ``task``.
    """
    try:
        text = read_input(path).decode("utf-8")
    except UnicodeDecodeError as problem:
        raise InputError(f"is not UTF-8 text ({problem.reason} at byte {problem.start})", path=str(path)) from None
    return curves_from_csv(text, task=task, source=str(path))


def _number(cell: str, name: str, source: str, line: int) -> float:
    """A cell as a float; an empty cell (a figure without a finite value) is NaN."""
    if cell == "":
        return math.nan
    try:
        return float(cell)
    except ValueError:
        raise InputError(f"expected a number, got {cell!r}", path=source, line=line, field=name) from None
