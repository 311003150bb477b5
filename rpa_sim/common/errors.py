"""The one exception type for bad input, carrying where the problem is, and how messages quote what they show.

A message is one line on a terminal, whatever the data holds: every value it
quotes goes through :func:`shown` (escaped, quoted, at most
:data:`SHOWN_LIMIT` characters shown), every id and field through
:func:`Location.__str__`, which escapes and shortens them the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["SHOWN_LIMIT", "FIELD_LIMIT", "InputError", "UsageError", "escaped", "shown"]

#: The most characters of a value (or an id) a message shows; the rest is counted, not shown.
SHOWN_LIMIT = 80
#: The most characters of a field path a message shows: paths of nested service outputs run past 100
#: (``ExpenseDocuments[0].LineItemGroups[0].LineItems[0]...``) and are what the reader needs whole.
FIELD_LIMIT = 240
# a value whose text is longer is not written further just to count it (a YAML alias can nest a list a million times)
_RENDER_BUDGET = 1_000_000
# the escapes that read better than their code, as Python's repr writes them
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(text: str, limit: int | None = None) -> str:
    """``text`` with every character a terminal would act on, or not show, written as its escape.

    Control characters (a newline, ``ESC`` of a colour or cursor sequence),
    separators other than the space and invisible format characters (a
    right-to-left override) are written as Python's ``repr`` writes them,
    so that a message stays one line and reads as it prints. Backslashes are
    kept as they are: see :func:`shown` for text that must also read back
    unambiguously. With a ``limit``, at most ``limit`` characters are
    written, then ``...(N characters)`` counting all of ``text``.

    Examples
    --------
    >>> print(escaped("r-1\\n\\x1b[2J\\u202e"))
    r-1\\n\\x1b[2J\\u202e
    >>> escaped("plain text, é and ü")
    'plain text, é and ü'
    >>> escaped("\\x1b" * 1_048_576, limit=10)
    '\\\\x1b\\\\x1b...(1,048,576 characters)'
    """
    written, cut = _written(text, limit, _escape)
    return f"{written}...({len(text):,} characters)" if cut else written


def shown(value: Any, *, quote: str = '"', limit: int = SHOWN_LIMIT) -> str:
    r"""A value as a message quotes it: written as in JSON, escaped, at most ``limit`` characters and a count.

    Strings are in ``quote`` (JSON's double quote by default; YAML messages
    use ``'``), with backslashes, the quote and every character
    :func:`escaped` escapes written as Python's ``repr`` writes them; lists
    and mappings in flow style; ``true``, ``false``, ``null``; floats that
    are not finite as ``nan``, ``inf``, ``-inf``. Nesting of any depth is
    written without recursion, a list or mapping inside itself (YAML
    aliases make them) as ``[...]`` or ``{...}``. At most ``limit``
    characters are written (of a string, between its quotes), then
    ``...(N characters)``: the length of the string, or of the whole text of
    another value (``more than 1,000,000`` beyond that). Whatever the value,
    the result is one short line.

    Examples
    --------
    >>> print(shown([10, 0.5, float("nan"), None, True, "é"]))
    [10, 0.5, nan, null, true, "é"]
    >>> print(shown("r-1\n\x1b[31m"), shown("swep", quote="'"), shown({"a": ["b"]}, quote="'"))
    "r-1\n\x1b[31m" 'swep' {'a': ['b']}
    >>> shown("x" * 1_048_576) == '"' + "x" * 80 + '...(1,048,576 characters)'
    True
    >>> loop = [1]
    >>> loop.append(loop)
    >>> print(shown(loop), shown([[1] * 10**6] * 10**6)[-40:])
    [1, [...]] ...(more than 1,000,000 characters)
    """
    if isinstance(value, str):
        written, cut = _written(value, limit, lambda char: _escape_quoted(char, quote))
        return f"{quote}{written}" + (f"...({len(value):,} characters)" if cut else quote)
    pieces, length = [], 0
    for piece in _pieces(value, quote):
        pieces.append(piece)
        length += len(piece)
        if length > _RENDER_BUDGET:
            return f"{''.join(pieces)[:limit]}...(more than {_RENDER_BUDGET:,} characters)"
    text = "".join(pieces)
    return text if len(text) <= limit else f"{text[:limit]}...({len(text):,} characters)"


def _written(text: str, limit: int | None, escape: Callable[[str], str]) -> tuple[str, bool]:
    """``text``, each character through ``escape``, to at most ``limit`` characters; and whether it was cut."""
    if limit is None or len(text) <= limit:
        if escape is _escape and text.isprintable():
            return text, False
        whole = "".join(map(escape, text))
        if limit is None or len(whole) <= limit:
            return whole, False
    # only the characters shown are escaped: a long text costs no more than a short one
    written, used = [], 0
    for char in text:
        piece = escape(char)
        if used + len(piece) > limit:
            break
        written.append(piece)
        used += len(piece)
    return "".join(written), True


def _escape(char: str) -> str:
    return char if char.isprintable() else _NAMED_ESCAPES.get(char) or repr(char)[1:-1]


def _escape_quoted(char: str, quote: str) -> str:
    return "\\" + char if char in ("\\", quote) else _escape(char)


def _pieces(value: Any, quote: str) -> Iterator[str]:
    """The text of ``value`` in pieces, depth first with a stack of its own (no recursion limit)."""
    # items to write: a value, or punctuation to write as it is; closing a container ends its "open" mark
    pending: list[tuple[Any, str | None, int | None]] = [(value, None, None)]
    open_containers: set[int] = set()
    while pending:
        item, punctuation, closes = pending.pop()
        if closes is not None:
            open_containers.discard(closes)
        if punctuation is not None:
            yield punctuation
        elif isinstance(item, (dict, list, tuple)):
            is_mapping = isinstance(item, dict)
            if id(item) in open_containers:
                yield "{...}" if is_mapping else "[...]"
                continue
            open_containers.add(id(item))
            parts: list[tuple[Any, str | None, int | None]] = [(None, "{" if is_mapping else "[", None)]
            for index, inner in enumerate(item.items() if isinstance(item, dict) else item):
                if index:
                    parts.append((None, ", ", None))
                parts += [(inner[0], None, None), (None, ": ", None), (inner[1], None, None)] if is_mapping \
                    else [(inner, None, None)]
            parts.append((None, "}" if is_mapping else "]", id(item)))
            pending.extend(reversed(parts))
        else:
            yield _scalar(item, quote)


def _scalar(value: Any, quote: str) -> str:
    if hasattr(value, "item") and type(value).__module__ == "numpy":  # a NumPy number shown as the number it is
        value = value.item()
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        try:
            return str(value)
        except ValueError:  # more digits than Python converts to text
            return f"<a whole number of {value.bit_length():,} bits>"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    text = value if isinstance(value, str) else str(value)
    return f"{quote}{''.join(_escape_quoted(char, quote) for char in text)}{quote}"


@dataclass(frozen=True)
class Location:
    """Where a problem sits: file, 1-based line, record id and field path, each when known."""

    path: str | None = None
    line: int | None = None
    record_id: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        """The known parts joined by ``: ``; the path escaped, the record id and field escaped and shortened.

        >>> print(Location("a.jsonl", 3, "r-1\\n\\x1b[2J" + "x" * 100, "prediction"))  # doctest: +ELLIPSIS
        a.jsonl: line 3 (id r-1\\n\\x1b[2Jxxx...xxx...(108 characters)): prediction
        """
        parts = []
        if self.path is not None:
            parts.append(escaped(self.path))
        record_id = None if self.record_id is None else escaped(self.record_id, SHOWN_LIMIT)
        if self.line is not None:
            where = f"line {self.line}"
            if record_id is not None:
                where += f" (id {record_id})"
            parts.append(where)
        elif record_id is not None:
            parts.append(f"id {record_id}")
        if self.field:
            parts.append(escaped(self.field, FIELD_LIMIT))
        return ": ".join(parts)


class InputError(ValueError):
    """Input that does not fit the canonical formats.

    The message reads ``FILE: line N (id ID): FIELD: problem`` with whatever
    parts are known, as docs/formats.md asks.

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
