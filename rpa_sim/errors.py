"""The one exception type for bad input, carrying where the problem is."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["InputError"]


@dataclass(frozen=True)
class Location:
    """Where a problem sits: file, 1-based line, record id and field path, each when known."""

    path: str | None = None
    line: int | None = None
    record_id: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        parts = []
        if self.path is not None:
            parts.append(self.path)
        if self.line is not None:
            where = f"line {self.line}"
            if self.record_id is not None:
                where += f" (id {self.record_id})"
            parts.append(where)
        elif self.record_id is not None:
            parts.append(f"id {self.record_id}")
        if self.field:
            parts.append(self.field)
        return ": ".join(parts)


class InputError(ValueError):
    """Input that does not fit the canonical formats.

    The message reads ``FILE: line N (id ID): FIELD: problem`` with whatever
    parts are known, as FORMATS.md asks.

    Examples
    --------
    >>> str(InputError("1.7 is not in [0, 1]", path="a.jsonl", line=812, record_id="r-0231",
    ...                field="prediction.groups[2][0].confidence"))
    'a.jsonl: line 812 (id r-0231): prediction.groups[2][0].confidence: 1.7 is not in [0, 1]'
    """

    def __init__(self, problem: str, *, path: str | None = None, line: int | None = None,
                 record_id: str | None = None, field: str | None = None) -> None:
        self.problem = problem
        self.location = Location(path, line, record_id, field)
        where = str(self.location)
        super().__init__(f"{where}: {problem}" if where else problem)


__all__ += ["UsageError"]


class UsageError(Exception):
    """A request that cannot work as written (exit status 2): options that do not go together, a size too large.

    Worded as :class:`InputError`, ``FILE: line N: FIELD: problem`` with the
    parts known (a size in a YAML file names the file, the line and the field).

    Examples
    --------
    >>> str(UsageError("1e9 days is more than the 100,000 allowed", path="s.yaml", line=7,
    ...                field="monitoring.width_days"))
    's.yaml: line 7: monitoring.width_days: 1e9 days is more than the 100,000 allowed'
    """

    def __init__(self, problem: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.problem = problem
        self.location = Location(path, line, None, field)
        where = str(self.location)
        super().__init__(f"{where}: {problem}" if where else problem)
