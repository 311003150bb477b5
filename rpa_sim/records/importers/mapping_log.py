"""A production log from any JSON output: the ``log:`` section of a mapping file (``docs/importers/mapping.md``).

A platform's export of what happened to each predicted field (was it sent to
a person, accepted, drawn for a check; what the person found; when; what kind
of document; which channel) becomes a log in the format of
``docs/monitoring.md``, which ``rpa-sim estimate`` and ``rpa-sim watch``
read: one row per predicted field the mapping imports, with the record's id,
the field's key, value and confidence, and the columns the ``log:`` section's
paths find (from the field, ``@``, or the record, ``$``).

- ``route``: the path to the field's route; its value, as text, is looked up
  in ``routes`` (the output's words for ``auto``, ``review`` and ``audit``;
  by default those words themselves).
- ``correct``: what the person who looked found: true or false (``"true"``,
  ``"false"``, ``"yes"``, ``"no"``, 1 and 0 too); or, without it,
  ``checked_value``: the value the person left, the field being correct when it
  is the predicted value (and the checked value its ``corrected_value`` when
  not). One of them is needed on ``review`` and ``audit`` rows; ``auto`` rows
  have neither.
- ``inclusion_probability``: a number (the audit rate of every accepted
  field) or the path to each field's; 1 on ``review`` rows.
- ``day`` (``YYYY-MM-DD``) or ``received_at`` (an ISO 8601 date and time),
  ``document_type``, ``source``, ``stratum``, ``corrected_value``: optional paths.

A value that does not fit is an error naming the file, line, id and place in
the JSON, as for the records.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from rpa_sim.common.dates import day_of
from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.files import atomic_output
from rpa_sim.common.validation import StrictModel
from rpa_sim.records.importers.jsonpath import Match, parse_path
from rpa_sim.records.importers.service import value_text
from rpa_sim.records.importers.sources import join_lines

__all__ = ["LogMapping", "LogRows"]

Route = Literal["auto", "review", "audit"]
# the columns in the order of docs/monitoring.md (received_at, which the format reads too, after day)
_COLUMNS = ("day", "received_at", "id", "document_type", "source", "key", "value", "confidence", "route", "stratum",
            "inclusion_probability", "correct", "corrected_value")
# the columns that hold a field's value, whose line breaks --join-lines writes as spaces
_VALUES = ("checked_value", "corrected_value")
_TRUE, _FALSE = frozenset({"true", "yes", "1"}), frozenset({"false", "no", "0"})
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _path(text: str) -> str:
    parse_path(text)  # a malformed path is the setting's error, with its place in the YAML file
    return text


PathText = Annotated[str, AfterValidator(_path)]


class LogMapping(StrictModel):
    """The ``log:`` section: where each predicted field's route, check and day are."""

    route: PathText
    routes: dict[str, Route] | None = None
    correct: PathText | None = None
    checked_value: PathText | None = None
    inclusion_probability: PathText | Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 1.0
    day: PathText | None = None
    received_at: PathText | None = None
    document_type: PathText | None = None
    source: PathText | None = None
    stratum: PathText | None = None
    corrected_value: PathText | None = None

    @model_validator(mode="after")
    def _one_of_each(self) -> LogMapping:
        if self.day is not None and self.received_at is not None:
            raise ValueError("give day or received_at, not both: a row's day is one or the other")
        if self.correct is None and self.checked_value is None:
            raise ValueError("give correct (what the person found) or checked_value (the value they left): a "
                             "reviewed or audited field needs one")
        return self


class LogRows:
    """The log rows of the imported fields, gathered as the records are read, written once they all are.

    Parameters
    ----------
    settings : LogMapping
    join_lines : bool, default=False
        Write each line break of the checked and corrected values as a space, as ``--join-lines`` writes the
        predicted values that they are compared with.
    """

    def __init__(self, settings: LogMapping, *, join_lines: bool = False) -> None:
        self.settings, self.join_lines = settings, join_lines
        self.rows: list[dict[str, Any]] = []

    def _found(self, name: str, record: Match, field: Match, error: Any) -> Match | None:
        text = getattr(self.settings, name)
        if not isinstance(text, str):
            return None
        path = parse_path(text)
        found = path.matches(field.value, field.where) if path.root == "@" else path.matches(record.value,
                                                                                              record.where)
        if len(found) > 1:
            raise error(found[1].where, f"log.{name}: the path matches {len(found)} values ({found[0].where}, "
                                        f"{found[1].where}, ...), expected one")
        return found[0] if found and found[0].value is not None else None

    def _text(self, name: str, record: Match, field: Match, error: Any) -> str | None:
        match = self._found(name, record, field, error)
        if match is None:
            return None
        if isinstance(match.value, (dict, list)):
            raise error(match.where, f"log.{name}: expected a value (a string, number or boolean), got "
                                     f"{shown(match.value)}")
        try:
            text = value_text(match.value)
        except ValueError as problem:
            raise error(match.where, f"log.{name}: {problem}") from None
        return join_lines(text) if self.join_lines and name in _VALUES else text

    def add(self, record: Match, field: Match, row: dict[str, Any], error: Any) -> None:
        """The log row of one imported field; ``row`` holds its id, key, value and confidence.

        ``error(where, problem)`` makes the :class:`InputError` that names the file, line, id and place.
        """
        settings = self.settings
        word = self._text("route", record, field, error)
        if word is None:
            raise error(field.where, f"log.route {settings.route!r} matches nothing in this field: every logged "
                                     f"field needs its route")
        routes = settings.routes or {"auto": "auto", "review": "review", "audit": "audit"}
        if word not in routes:
            raise error(field.where, f"log.route found {shown(word)}, which log.routes does not name (it names "
                                     f"{', '.join(map(shown, routes))})")
        route = routes[word]
        found = {name: self._text(name, record, field, error)
                 for name in ("day", "received_at", "document_type", "source", "stratum", "corrected_value")}
        for name in ("day", "received_at"):
            if found[name] is not None:
                try:
                    day_of(found[name], column=name)
                except ValueError as problem:
                    raise error(field.where, f"log.{name}: {problem}") from None
        correct = self._correct(route, record, field, error)
        if correct is None and route != "auto":  # no correct path: the checked value tells
            checked = self._text("checked_value", record, field, error)
            if checked is None:
                raise error(field.where, f"log.checked_value {self.settings.checked_value!r} matches nothing: a "
                                         f"{route} field needs the value the person left")
            correct = checked == row["value"]
            if not correct and found["corrected_value"] is None:
                found["corrected_value"] = checked
        logged = {**row, **found, "route": route, "inclusion_probability": self._inclusion(route, record, field, error),
                  "correct": correct}
        self.rows.append({name: logged[name] for name in _COLUMNS
                          if logged.get(name) is not None or name in ("confidence", "correct")})

    def _inclusion(self, route: str, record: Match, field: Match, error: Any) -> float:
        if route == "review":
            return 1.0
        given = self.settings.inclusion_probability
        if isinstance(given, float):
            value: Any = given
        else:
            match = self._found("inclusion_probability", record, field, error)
            if match is None:
                raise error(field.where, f"log.inclusion_probability {given!r} matches nothing: an {route} row "
                                         f"needs its audit rate")
            value = match.value
            with contextlib.suppress(ValueError):  # a number written as a string
                value = float(value) if isinstance(value, str) else value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise error(field.where, f"log.inclusion_probability: expected a number in [0, 1], got {shown(value)}")
        if route == "audit" and value == 0:
            raise error(field.where, "log.inclusion_probability: an audited field was drawn, so its probability is "
                                     "above 0, got 0")
        return float(value)

    def _correct(self, route: str, record: Match, field: Match, error: Any) -> bool | None:
        """``correct`` as found; None on auto rows, and without a ``correct`` path (``checked_value`` tells)."""
        match = self._found("correct", record, field, error)
        if route == "auto":
            if match is not None:
                raise error(match.where, f"log.correct: an auto field was checked by nobody, got {shown(match.value)}; "
                                         f"a field drawn for a check has route audit")
            return None
        if self.settings.correct is None:
            return None
        if match is None:
            raise error(field.where, f"log.correct: a {route} field needs what the person found (true or false), "
                                     f"and the path matches nothing")
        value = match.value
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower() if isinstance(value, (str, int)) else None
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise error(match.where, f"log.correct: expected true or false, got {shown(value)}")

    def write(self, path: Path) -> int:
        """Write the rows as JSON Lines (gzip when the name ends in ``.gz``), atomically; the rows written."""
        if not self.rows:
            raise InputError("no log rows: no imported field was logged", path=str(path))
        with atomic_output(path) as out:
            for row in self.rows:
                out.write((_ENCODE(row) + "\n").encode("utf-8"))
        return len(self.rows)
