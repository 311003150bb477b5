"""A small JSONPath-like syntax to point into parsed JSON: ``$.a.b``, ``a[*]``, ``a[0]``, ``*`` over keys.

A path starts at a root, ``$`` (the record) or ``@`` (the current field, in
the settings read per field), followed by steps:

- ``.name`` or ``['name']`` / ``["name"]``: the member ``name`` of an object
  (the quoted form for names with dots, brackets, spaces or quotes);
- ``[n]``: item ``n`` of a list, from 0 (``[-1]`` is the last);
- ``.*`` or ``[*]``: every member of an object, in the file's order, binding
  its name (:attr:`Match.keys`), or every item of a list.

A step that does not apply (a member an object does not have, an index past
the end, a name on a list) matches nothing; there are no filters, slices or
recursive descent. Every match carries the concrete path it was found at
(``$.fields.total.score``), for messages.

Examples
--------
>>> record = {"fields": {"total": {"value": "12.00", "score": 0.93}, "date": {"value": "1.1."}}}
>>> [(m.keys, m.value) for m in parse_path("$.fields.*.value").matches(record)]
[(('total',), '12.00'), (('date',), '1.1.')]
>>> [m.where for m in parse_path("$.fields.*.score").matches(record)]
['$.fields.total.score']
>>> parse_path("$.fields[").text
Traceback (most recent call last):
...
ValueError: '$.fields[' at character 10: expected an index, * or a quoted name after [
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["Match", "JsonPath", "parse_path", "step_text"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_INDEX = re.compile(r"-?[0-9]+")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")
# a step: ("member", name), ("index", n) or ("all", None)
Step = tuple[str, Any]


@dataclass(frozen=True)
class Match:
    """A value a path found, where (its concrete path) and the object keys its wildcards bound on the way."""

    value: Any
    where: str
    keys: tuple[str, ...] = ()


def step_text(step: Step) -> str:
    """A step as a path writes it: ``.name``, ``["odd name"]``, ``[3]`` or ``.*``.

    >>> step_text(("member", "total")), step_text(("member", "a.b")), step_text(("index", 2)), step_text(("all", None))
    ('.total', '["a.b"]', '[2]', '.*')
    """
    kind, argument = step
    if kind == "index":
        return f"[{argument}]"
    if kind == "all":
        return ".*"
    return f".{argument}" if _PLAIN_NAME.match(argument) else f"[{json.dumps(argument, ensure_ascii=False)}]"


@dataclass(frozen=True)
class JsonPath:
    """A parsed path: its text, its root (``$`` or ``@``) and its steps."""

    text: str
    root: str
    steps: tuple[Step, ...]

    @property
    def has_wildcard(self) -> bool:
        """Whether the path can match several values."""
        return any(kind == "all" for kind, _ in self.steps)

    def matches(self, node: Any, where: str | None = None) -> list[Match]:
        """Every value the path finds from ``node`` (its root), in document order.

        Parameters
        ----------
        node : any
            The parsed JSON the root stands for.
        where : str, optional
            The concrete path of ``node`` (default: the root's own sign).
        """
        found = [Match(node, self.root if where is None else where)]
        for step in self.steps:
            found = [inner for match in found for inner in _step(match, step)]
            if not found:
                break
        return found

    def reach(self, node: Any) -> tuple[str, list[Match]]:
        """The longest start of the path that still matches something, and what it matches; for messages."""
        found, text = [Match(node, self.root)], self.root
        for step in self.steps:
            further = [inner for match in found for inner in _step(match, step)]
            if not further:
                break
            found, text = further, text + step_text(step)
        return text, found


def _step(match: Match, step: Step) -> list[Match]:
    kind, argument = step
    node = match.value
    if kind == "member":
        if isinstance(node, dict) and argument in node:
            return [Match(node[argument], match.where + step_text(step), match.keys)]
        return []
    if kind == "index":
        if isinstance(node, list) and -len(node) <= argument < len(node):
            position = argument % len(node)
            return [Match(node[position], f"{match.where}[{position}]", match.keys)]
        return []
    if isinstance(node, dict):
        return [Match(value, match.where + step_text(("member", key)), (*match.keys, key))
                for key, value in node.items()]
    if isinstance(node, list):
        return [Match(value, f"{match.where}[{i}]", match.keys) for i, value in enumerate(node)]
    return []


@lru_cache(maxsize=256)
def parse_path(text: str) -> JsonPath:
    """Parse a path; a malformed one is a :class:`ValueError` naming the character where it goes wrong.

    Examples
    --------
    >>> parse_path("@['unit price'][0]").steps
    (('member', 'unit price'), ('index', 0))
    >>> parse_path("fields.total")
    Traceback (most recent call last):
    ...
    ValueError: 'fields.total' at character 1: a path starts with $ (the record) or @ (the field)
    """
    if not text or text[0] not in "$@":
        raise ValueError(_at(text, 0, "a path starts with $ (the record) or @ (the field)"))
    steps: list[Step] = []
    position = 1
    while position < len(text):
        char = text[position]
        if char == ".":
            if text.startswith("*", position + 1):
                steps.append(("all", None))
                position += 2
                continue
            name = _NAME.match(text, position + 1)
            if name is None:
                raise ValueError(_at(text, position + 1, "expected a name or * after . (quote other names: "
                                                         "['a name'])"))
            steps.append(("member", name.group()))
            position = name.end()
        elif char == "[":
            step, position = _bracket(text, position)
            steps.append(step)
        else:
            raise ValueError(_at(text, position, "expected . or [ between steps"))
    return JsonPath(text, text[0], tuple(steps))


def _bracket(text: str, position: int) -> tuple[Step, int]:
    """The step written in brackets at ``position`` (the ``[``), and the position after its ``]``."""
    inside = position + 1
    if text.startswith("*]", inside):
        return ("all", None), inside + 2
    index = _INDEX.match(text, inside)
    if index is not None and text.startswith("]", index.end()):
        return ("index", int(index.group())), index.end() + 1
    if inside < len(text) and text[inside] in "'\"":
        quote, chars, cursor = text[inside], [], inside + 1
        while cursor < len(text) and text[cursor] != quote:
            if text[cursor] == "\\" and cursor + 1 < len(text):
                cursor += 1
            chars.append(text[cursor])
            cursor += 1
        if text.startswith(f"{quote}]", cursor):
            return ("member", "".join(chars)), cursor + 2
        raise ValueError(_at(text, inside, f"a quoted name needs its closing {quote}]"))
    raise ValueError(_at(text, inside, "expected an index, * or a quoted name after ["))


def _at(text: str, position: int, problem: str) -> str:
    return f"{text!r} at character {position + 1}: {problem}"
