"""Joining a ground-truth file and a predictions file on ``id``: in lockstep while the ids agree, then on disk.

Files in the same id order are joined line by line; from the first id that
differs, the remaining predictions are indexed in a temporary SQLite
database, so memory stays bounded whatever the order. Each record to
validate is a :class:`Pair` of lines; an id on one side only is a
:class:`~rpa_sim.records.lines.Problem`.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import tempfile
from collections.abc import Generator, Iterator
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple, cast

from rpa_sim.common.errors import InputError
from rpa_sim.common.files import remove_abandoned
from rpa_sim.records.lines import Line, Problem, bad, parse_text, raw_records
from rpa_sim.records.models import KIERecord, VQARecord

__all__ = ["Pair", "join"]

# Top-level fields that may come from only one of the two files.
_SIDE_FIELDS = (KIERecord.model_fields.keys() | VQARecord.model_fields.keys()) - {"id"}


class Pair(NamedTuple):
    """A record to validate: one line, or a ground-truth line and its prediction line."""

    truth: Line
    pred: Line | None

    @property
    def lines(self) -> tuple[Line, ...]:
        return (self.truth,) if self.pred is None else (self.truth, self.pred)

    @property
    def data(self) -> dict[str, Any]:
        return self.truth.data if self.pred is None else {**self.truth.data, **self.pred.data}

    @property
    def text(self) -> str:
        if self.pred is None:
            return self.truth.text
        # The members of both objects side by side: cheaper than encoding the merged dict again.
        # Only "id" (the same on both sides) and unknown, ignored fields can appear twice.
        return f"{self.truth.text.rstrip()[:-1]},{self.pred.text.lstrip()[1:]}"

    def line_of(self, key: str) -> Line:
        """The line a top-level field comes from, or where it was expected when absent."""
        if self.pred is None:
            return self.truth
        if key in self.pred.keys:
            return self.pred
        if key in self.truth.keys:
            return self.truth
        return self.pred if key == "prediction" else self.truth


def _pair(truth: Line, pred: Line) -> Pair | Problem:
    clash = next((key for key in pred.keys if key in _SIDE_FIELDS and key in truth.keys), None)
    if clash is None:
        return Pair(truth, pred)
    problem = f"also in {truth.path} line {truth.number}; each file holds only its side"
    return bad(problem, "field in both files", pred, field=clash)


def join(truth_path: Path, pred_path: Path) -> Generator[Pair | Problem, None, None]:
    """Join on id: in lockstep while the ids agree, then through an on-disk index."""
    truth_seen: dict[str, int] = {}
    truths, preds = raw_records(truth_path, truth_seen), raw_records(pred_path, {})
    truth, pred = next(truths, None), next(preds, None)
    while truth is not None or pred is not None:
        if isinstance(truth, Problem):
            yield truth
            truth = next(truths, None)
        elif isinstance(pred, Problem):
            yield pred
            pred = next(preds, None)
        elif truth is not None and pred is not None and truth.id == pred.id:
            yield _pair(truth, pred)
            truth, pred = next(truths, None), next(preds, None)
        else:
            yield from _join_indexed(_prepend(truth, truths), _prepend(pred, preds),
                                     truth_seen=truth_seen, truth_path=truth_path, pred_path=pred_path)
            return


def _prepend(item: Line | None, rest: Iterator[Line | Problem]) -> Iterator[Line | Problem]:
    return rest if item is None else chain([item], rest)


def _join_indexed(truths: Iterator[Line | Problem], preds: Iterator[Line | Problem], *,
                  truth_seen: dict[str, int], truth_path: Path, pred_path: Path) -> Iterator[Pair | Problem]:
    """Index the remaining predictions on disk, then look each remaining ground truth up.

    Predictions joined in lockstep before are not in the index; their ids are
    in ``truth_seen`` like every ground-truth id, which finds the orphans.
    """
    with _index_folder() as directory, contextlib.closing(sqlite3.connect(Path(directory) / "predictions.db")) as db:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("CREATE TABLE pred (id TEXT PRIMARY KEY, line INTEGER, text TEXT)")
        for item in preds:
            if isinstance(item, Problem):
                yield item
            else:
                db.execute("INSERT INTO pred VALUES (?, ?, ?)", (item.id, item.number, item.text))
        for item in truths:
            if isinstance(item, Problem):
                yield item
                continue
            row = db.execute("SELECT line, text FROM pred WHERE id = ?", (item.id,)).fetchone()
            if row is None:
                yield bad(f"no prediction with this id in {pred_path}", "ground truth without prediction", item)
            else:
                # read again as when indexed: a line with a string id
                line = cast(Line, parse_text(str(pred_path), row[0], row[1]))
                yield _pair(item, line)
        for record_id, number in db.execute("SELECT id, line FROM pred ORDER BY rowid"):
            if record_id not in truth_seen:
                error = InputError(f"no ground truth with this id in {truth_path}", path=str(pred_path),
                                   line=number, record_id=record_id)
                yield Problem(error, "prediction without ground truth")


# The folder of a join index: "rpa-sim-<pid>-" and tempfile's eight random letters, digits or underscores.
_INDEX_FOLDER = re.compile(r"rpa-sim-(?P<owner>[1-9][0-9]*)-[a-z0-9_]{8}")


def _index_folder() -> tempfile.TemporaryDirectory[str]:
    """A temporary folder for a join index, named after this process; those of killed processes are removed first.

    The folder goes when the index is done with, on an error or an interrupt
    too; a process killed meanwhile (SIGKILL, the OOM killer) leaves it, and
    the next process that makes an index removes it
    (:func:`rpa_sim.common.files.remove_abandoned`).
    """
    remove_abandoned(Path(tempfile.gettempdir()), _INDEX_FOLDER)
    return tempfile.TemporaryDirectory(prefix=f"rpa-sim-{os.getpid()}-")
