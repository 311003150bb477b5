"""Typed JSON: frozen dataclasses to plain JSON values and back, naming the first bad key.

Each stage declares its results as frozen dataclasses (a curve's operating point,
a certification, a cost split, an operation, a monitoring, a decision) and the
study composes them into ``StudySummary``, whose encoding is ``summary.json``
(``docs/summary.md``). This module reads and writes such types generically:
:func:`decoded` reads a JSON value as a type (a dataclass, a :class:`FrozenMap`,
a tuple, a scalar, a ``Literal``, a union, a pydantic model such as a scenario's
section or a policy), validating every key and type and naming the key path of
the first problem; :func:`encoded` writes a result object back, keys in the order
its fields have them. Lists are tuples, JSON objects whose keys are data
(targets, fields, methods) are :class:`FrozenMap`, floats are kept exactly (JSON
writes them by ``repr``).

A dataclass field made with :func:`left_out` is a key left out when it has no
value (None here, never written as null; with ``empty=True`` a list left out
when empty, ``()`` here, never written as ``[]``); one made with
:func:`present_when` is present exactly when an earlier field is given (neither
None, false nor an empty tuple); one made with
:func:`unwritten` is kept in memory only (never written, None when read, and not
compared). A dataclass may adapt its JSON with ``_json_in(value, path)`` (a
classmethod, before reading) and ``_json_out(value)`` (after writing).

Examples
--------
>>> from dataclasses import dataclass
>>> from rpa_sim.common import jsontext
>>> @dataclass(frozen=True)
... class Point:
...     threshold: float
...     cost: float | None
...     note: str | None = left_out()
>>> point = Point(threshold=0.9, cost=None)
>>> text = jsontext.dumps(encoded(point))
>>> text
'{"threshold": 0.9, "cost": null}'
>>> decoded(Point, json.loads(text), "point") == point
True
>>> decoded(Point, {**json.loads(text), "threshold": "0.9"}, "policies[1].cost_optimum")
Traceback (most recent call last):
...
rpa_sim.common.errors.InputError: policies[1].cost_optimum.threshold: expected a number, got a string: "0.9"
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterator, Mapping
from dataclasses import field, fields, is_dataclass
from functools import cache
from typing import Any, Generic, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ValidationError

from rpa_sim.common.errors import InputError, shown

__all__ = ["FrozenMap", "encoded", "decoded", "json_object", "left_out", "present_when", "given", "unwritten",
           "joined"]

V = TypeVar("V")


class FrozenMap(Mapping[str, V], Generic[V]):
    """A read-only JSON object whose keys are data (targets, fields, methods), in the order written.

    >>> FrozenMap({"0.95": 0.8})["0.95"], FrozenMap({"a": 1}) == {"a": 1}
    (0.8, True)
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, V] | None = None) -> None:
        self._items = dict(items or {})

    def __getitem__(self, key: str) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"

    def __getstate__(self) -> dict[str, V]:
        return self._items

    def __setstate__(self, items: dict[str, V]) -> None:
        self._items = items


def left_out(*, empty: bool = False) -> Any:
    """A key left out when it has no value: None here, never written as null; with ``empty``, a list left
    out when it is empty, ``()`` here, never written as ``[]``."""
    if empty:
        return field(default=(), metadata={"left_out": True, "empty": True})
    return field(default=None, metadata={"left_out": True})


def present_when(name: str, *, default: Any = None) -> Any:
    """A key present exactly when the field ``name`` (read first) is given (:func:`given`); ``default`` (None
    unless said) when absent."""
    return field(default=default, metadata={"present_when": name})


def given(value: Any) -> bool:
    """Whether a field has a value to write: neither None, false nor an empty tuple.

    >>> given(0.0), given(()), given(False), given(None)
    (True, False, False, False)
    """
    return value is not None and value is not False and not (isinstance(value, tuple) and not value)


def unwritten() -> Any:
    """A figure kept in memory only: never written, None when read back, and left out of comparisons."""
    return field(default=None, compare=False, metadata={"unwritten": True})


def _written(cls: Any) -> list[Any]:
    """The fields of a dataclass that JSON holds, in order."""
    return [item for item in fields(cls) if not item.metadata.get("unwritten")]


_JSON_KINDS = {"null": "null", "boolean": "true or false", "integer": "an integer", "number": "a number",
               "string": "a string", "list": "a list", "object": "an object"}


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    return "object" if isinstance(value, Mapping) else type(value).__name__


def _kind_of(value: Any) -> str:
    """What a JSON value is, as a message says it: ``a string: "0.9"``."""
    kind = _JSON_KINDS.get(_json_kind(value), f"a Python {type(value).__name__}")
    return kind if value is None or kind in ("a list", "an object") else f"{kind}: {shown(value)}"


def joined(path: str, key: str) -> str:
    """``path.key``, or ``path["key"]`` for a key that is not a plain name."""
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{shown(key)}]"


def json_object(source: str | bytes | Mapping[str, Any], *, name: str) -> Mapping[str, Any]:
    """The JSON object of a text (or the mapping given), for a file called ``name`` in messages.

    Raises
    ------
    InputError
        When the text is not JSON (``NaN`` and infinities included) or holds
        something other than an object.

    Examples
    --------
    >>> json_object('{"a": 1}', name="summary.json")
    {'a': 1}
    >>> json_object("[1]", name="summary.json")
    Traceback (most recent call last):
    ...
    rpa_sim.common.errors.InputError: summary.json holds a list, not an object
    """
    if isinstance(source, Mapping):
        value = source
    else:
        try:
            value = json.loads(source, parse_constant=_refuse_constant)
        except (ValueError, RecursionError) as problem:  # RecursionError: nested deeper than Python reads
            raise InputError(f"{name} is not JSON: {problem}") from None
    if not isinstance(value, Mapping):
        raise InputError(f"{name} holds {_kind_of(value)}, not an object")
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _members(kind: Any) -> tuple[Any, ...]:
    return get_args(kind) if get_origin(kind) in (Union, types.UnionType) else (kind,)


def _expected(kind: Any) -> str:
    """What a type takes, as a message says it."""
    words = []
    for member in _members(kind):
        origin = get_origin(member)
        if member is type(None):
            words.append("null")
        elif origin is Literal:
            words.append("one of " + ", ".join(shown(choice) for choice in get_args(member)))
        elif origin is tuple:
            words.append("a list")
        elif is_dataclass(member) or origin is FrozenMap or (isinstance(member, type) and
                                                             issubclass(member, BaseModel)):
            words.append("an object")
        else:
            words.append(_JSON_KINDS[{bool: "boolean", int: "integer", float: "number", str: "string"}[member]])
    unique = list(dict.fromkeys(words))
    return " or ".join(unique)


def _takes(kind: Any, value: Any) -> bool:
    """Whether a JSON value is of the kind a (non-union) type takes; its content is checked apart."""
    found = _json_kind(value)
    origin = get_origin(kind)
    if kind is type(None):
        return found == "null"
    if origin is Literal:
        return found == "string"
    if origin is tuple:
        return found == "list"
    if is_dataclass(kind) or origin is FrozenMap or (isinstance(kind, type) and issubclass(kind, BaseModel)):
        return found == "object"
    return found in {bool: ("boolean",), int: ("integer",), float: ("integer", "number"), str: ("string",)}[kind]


def _fit(cls: type, value: Mapping[str, Any]) -> tuple[bool, int]:
    """How well an object fits a dataclass: whether its keys are exactly those the class reads, and how many
    it shares (a union of dataclasses takes the best fit)."""
    names = {item.name for item in _written(cls)}
    always = {item.name for item in _written(cls) if not item.metadata}
    keys = set(value)
    return keys <= names and always <= keys, len(keys & names)


def decoded(kind: Any, value: Any, path: str) -> Any:
    """The JSON ``value`` at key ``path`` as ``kind`` (a dataclass, a FrozenMap, a tuple, a scalar, a union).

    Raises
    ------
    InputError
        Naming the key path of the first value that does not fit.
    """
    candidates = [member for member in _members(kind) if _takes(member, value)]
    if not candidates:
        raise InputError(f"expected {_expected(kind)}, got {_kind_of(value)}", field=path or None)
    if len(candidates) > 1:
        candidates.sort(key=lambda member: _fit(member, value), reverse=True)
    kind = candidates[0]
    origin = get_origin(kind)
    if origin is Literal:
        if value not in get_args(kind):
            raise InputError(f"expected {_expected(kind)}, got {shown(value)}", field=path or None)
        return value
    if origin is tuple:
        items = get_args(kind)
        if len(items) == 2 and items[1] is Ellipsis:
            return tuple(decoded(items[0], item, f"{path}[{index}]") for index, item in enumerate(value))
        if len(value) != len(items):
            raise InputError(f"expected a list of {len(items)}, got {len(value)} items", field=path or None)
        return tuple(decoded(item_kind, item, f"{path}[{index}]")
                     for index, (item_kind, item) in enumerate(zip(items, value)))
    if origin is FrozenMap:
        (item_kind,) = get_args(kind)
        return FrozenMap({key: decoded(item_kind, item, f"{path}[{shown(key)}]") for key, item in value.items()})
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return _validated(kind, value, path)
    if isinstance(kind, type) and is_dataclass(kind):
        return _decoded_object(kind, value, path)
    return value


def _validated(model: type[BaseModel], value: Mapping[str, Any], path: str) -> BaseModel:
    """A scenario section echoed in the summary, read by the scenario's own model (strictly: no string for a
    number)."""
    try:
        return model.model_validate(value, strict=True)
    except ValidationError as error:
        first = error.errors()[0]
        where = path
        for part in first["loc"]:
            where = f"{where}[{part}]" if isinstance(part, int) else joined(where, str(part))
        raise InputError(first["msg"], field=where or None) from None


def _decoded_object(cls: type, value: Mapping[str, Any], path: str) -> Any:
    reader = getattr(cls, "_json_in", None)
    if reader is not None:
        value = reader(dict(value), path)
    names = {item.name for item in _written(cls)}
    for key in value:
        if key not in names:
            raise InputError("unknown key", field=joined(path, key))
    hints = _hints(cls)
    found: dict[str, Any] = {}
    for item in _written(cls):
        where = joined(path, item.name)
        condition = item.metadata.get("present_when")
        if condition is not None:
            if not given(found[condition]):
                if item.name in value:
                    raise InputError(f"present only when {condition} is neither null, false nor empty",
                                     field=where)
                found[item.name] = item.default
                continue
        elif item.metadata.get("left_out"):
            if item.name not in value:
                found[item.name] = item.default
                continue
            if value[item.name] is None:
                raise InputError("null: a summary leaves this key out when it has no value", field=where)
            if item.metadata.get("empty") and value[item.name] == []:
                raise InputError("[]: a summary leaves this key out when it is empty", field=where)
        if item.name not in value:
            raise InputError("missing key", field=where)
        kind = hints[item.name]
        if item.metadata.get("left_out"):  # None stands for the absent key, so the value itself is never null
            # a union of members computed at run time has no `X | Y` spelling
            kind = Union[tuple(member for member in _members(kind) if member is not type(None))]  # noqa: UP007
        found[item.name] = decoded(kind, value[item.name], where)
    return cls(**found)


def encoded(value: Any) -> Any:
    """A result object as plain JSON values (dicts, lists, numbers, strings, None), keys in summary order."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if is_dataclass(value):
        found: dict[str, Any] = {}
        for item in _written(value):
            own = getattr(value, item.name)
            condition = item.metadata.get("present_when")
            if condition is not None and not given(getattr(value, condition)):
                continue
            if item.metadata.get("left_out") and (own is None or (item.metadata.get("empty") and own == ())):
                continue
            found[item.name] = encoded(own)
        writer = getattr(value, "_json_out", None)
        return found if writer is None else writer(found)
    if isinstance(value, FrozenMap):
        return {key: encoded(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [encoded(item) for item in value]
    return value
