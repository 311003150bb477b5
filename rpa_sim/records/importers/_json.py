"""Reading the JSON files of real formats, with errors that name the file, line and field."""

from __future__ import annotations

import codecs
import json
import math
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

import msgspec
from pydantic import BaseModel, ValidationError

from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.inputs import input_lines, read_input

__all__ = ["JSONParts", "LazyList", "load_json", "load_json_parts", "parse_line", "show", "FieldChecks",
           "is_finite_number", "read_record_side"]

Side = TypeVar("Side", bound=BaseModel)

_LARGEST_FLOAT = sys.float_info.max
# bytes checked to be UTF-8 at a time
_UTF8_BLOCK = 1 << 20


def load_json(path: Path) -> Any:
    """The content of a JSON file; a missing, non-UTF-8 or invalid file is an :class:`InputError`.

    The file is read by :func:`rpa_sim.common.inputs.read_input`: a regular file (a
    pipe or a device is refused), at most ``RPA_SIM_MAX_FILE_BYTES``, with or
    without a byte-order mark.
    """
    try:
        text = read_input(path).decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 (byte {error.start})", path=str(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg} at column {error.colno}", path=str(path),
                         line=error.lineno) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=str(path)) from None
    except ValueError as error:  # an integer beyond Python's limit on digits
        raise InputError(f"invalid JSON: {error}", path=str(path)) from None


def load_json_parts(path: Path) -> Any:
    """A JSON file whose top is an object, each member left unparsed until asked for (:class:`JSONParts`).

    For large service outputs, most of whose bytes are parts an importer does
    not read (a result's whole ``content``, its tables, its lines) or reads one
    at a time (its pages): only the parts asked for become Python objects, so
    the memory held is about the file's bytes and what is made of them. The
    whole file is checked to be UTF-8 and JSON first. A top that is not an
    object is returned parsed, as :func:`load_json` returns it.

    Raises
    ------
    InputError
        As :func:`load_json`, the invalid JSON at its line and column.
    """
    data = read_input(path)
    _check_utf8(data, path)
    try:
        members = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
    except msgspec.ValidationError:  # valid JSON, but not an object: small enough to parse as it is
        return _parsed(data, str(path))
    except msgspec.DecodeError as error:
        raise _decode_error(error, data, str(path)) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=str(path)) from None
    return JSONParts(members, str(path))


class JSONParts:
    """A JSON object whose members are parsed when asked for; made by :func:`load_json_parts`.

    Examples
    --------
    >>> import msgspec
    >>> parts = JSONParts(msgspec.json.decode(b'{"a": {"b": [1, 2]}, "c": [{"d": 3}, 4]}',
    ...                                       type=dict[str, msgspec.Raw]), "x.json")
    >>> parts.keys(), "a" in parts, parts.value("a"), list(parts.listed("c")), parts.value("z", 0)
    (['a', 'c'], True, {'b': [1, 2]}, [{'d': 3}, 4], 0)
    >>> parts.object("a").value("b"), parts.listed("a")
    ([1, 2], {'b': [1, 2]})
    """

    def __init__(self, members: dict[str, msgspec.Raw], path: str) -> None:
        self._members, self.path = members, path

    def keys(self) -> list[str]:
        return list(self._members)

    def __contains__(self, key: str) -> bool:
        return key in self._members

    def value(self, key: str, default: Any = None) -> Any:
        """The member ``key`` parsed whole (as :func:`load_json` parses); ``default`` when there is none."""
        return _parsed(self._members[key], self.path) if key in self._members else default

    def object(self, key: str) -> Any:
        """The member ``key`` as :class:`JSONParts` when it is an object, else parsed whole."""
        raw = self._members[key]
        try:
            return JSONParts(msgspec.json.decode(raw, type=dict[str, msgspec.Raw]), self.path)
        except msgspec.ValidationError:
            return _parsed(raw, self.path)

    def listed(self, key: str, default: Any = None) -> Any:
        """The items of the member ``key``, each parsed when the iterator reaches it, when it is a list;
        else the member parsed whole (``default`` when there is none)."""
        if key not in self._members:
            return default
        raw = self._members[key]
        try:
            items = msgspec.json.decode(raw, type=list[msgspec.Raw])
        except msgspec.ValidationError:
            return _parsed(raw, self.path)
        return LazyList(items, self.path)


class LazyList:
    """A JSON list's items, parsed one at a time, each dropped once read."""

    def __init__(self, items: list[msgspec.Raw], path: str) -> None:
        self._items, self.path = items, path

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self._items)):
            item, self._items[index] = self._items[index], msgspec.Raw()
            yield _parsed(item, self.path)


def _parsed(raw: bytes | msgspec.Raw, path: str) -> Any:
    """A piece of JSON already checked to be well formed, parsed as :func:`load_json` parses (numbers, limits)."""
    try:
        return json.loads(bytes(raw))
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=path) from None
    except ValueError as error:  # an integer beyond Python's limit on digits (the rest was checked)
        raise InputError(f"invalid JSON: {error}", path=path) from None


def _check_utf8(data: bytes, path: Path) -> None:
    """Refuse bytes that are not UTF-8, a block at a time (never a whole decoded copy of the file)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    for start in range(0, len(data), _UTF8_BLOCK):
        try:
            decoder.decode(data[start:start + _UTF8_BLOCK], final=start + _UTF8_BLOCK >= len(data))
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 (byte {start + error.start})", path=str(path)) from None


def _decode_error(error: msgspec.DecodeError, data: bytes, path: str) -> InputError:
    """msgspec's ``JSON is malformed: ... (byte N)`` as ``invalid JSON: ... at column C`` on its line."""
    found = re.fullmatch(r"JSON is malformed: (.*) \(byte (\d+)\)", str(error))
    if found is None:  # "Input data was truncated"
        return InputError(f"invalid JSON: {str(error).lower()}", path=path)
    reason, offset = found.group(1), int(found.group(2))
    line_start = data.rfind(b"\n", 0, offset) + 1
    return InputError(f"invalid JSON: {reason} at column {offset - line_start + 1}", path=path,
                      line=data.count(b"\n", 0, offset) + 1)


def parse_line(raw: bytes, *, path: Path, line: int, record_id: str | None = None) -> Any:
    """One JSON Lines line of a real format; bad UTF-8 or JSON is an :class:`InputError` naming the line."""
    try:
        return json.loads(raw.rstrip(b"\r\n").decode("utf-8"))
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 (byte {error.start})", path=str(path), line=line) from None
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg} at column {error.pos + 1}", path=str(path), line=line,
                         record_id=record_id) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=str(path), line=line,
                         record_id=record_id) from None
    except ValueError as error:  # an integer beyond Python's limit on digits
        raise InputError(f"invalid JSON: {error}", path=str(path), line=line, record_id=record_id) from None


def is_finite_number(value: Any) -> TypeGuard[float]:
    """Whether a JSON value is a number a double holds: not a bool, finite, and an integer no larger than the
    largest double (``math.isfinite`` raises on a larger one, as ``10**400`` in a file is).

    Examples
    --------
    >>> [is_finite_number(v) for v in (3, 0.5, True, "1", float("inf"), 10**400)]
    [True, True, False, False, False, False]
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return abs(value) <= _LARGEST_FLOAT if isinstance(value, int) else math.isfinite(value)


def show(value: Any) -> str:
    """A bad value quoted as JSON, cut short so that a whole sub-tree is not printed."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except RecursionError:
        text = f"a {type(value).__name__} nested too deeply to show"
    return text if len(text) <= 60 else text[:57] + "..."


class FieldChecks:
    """Typed reads of a parsed JSON document; a subclass says how a problem is located (:meth:`error`)."""

    def error(self, field: str, problem: str) -> InputError:
        raise NotImplementedError

    def required(self, container: dict[str, Any], key: str, where: str = "") -> Any:
        if key not in container:
            raise self.error(f"{where}.{key}" if where else key, "missing")
        return container[key]

    def as_object(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(field, f"expected an object, got {show(value)}")
        return value

    def as_list(self, value: Any, field: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.error(field, f"expected a list, got {show(value)}")
        return value

    def as_text(self, value: Any, field: str) -> str:
        if not isinstance(value, str):
            raise self.error(field, f"expected a string, got {show(value)}")
        return value

    def as_number(self, value: Any, field: str) -> float:
        if not is_finite_number(value):
            raise self.error(field, f"expected a finite number, got {show(value)}")
        return float(value)


def read_record_side(path: Path, side: str, model: type[Side]) -> dict[str, Side]:
    """One side (``"prediction"`` or ``"ground_truth"``) of the canonical KIE records of ``path``, by id.

    Every problem is an :class:`InputError` naming the file, the line, the record id and the field path as the
    JSON has it (a duplicate id, a missing side, a side that does not validate).
    """
    sides: dict[str, Side] = {}
    for number, raw in input_lines(path):
        data = parse_line(raw, path=path, line=number)
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise InputError(f"expected a record with a string id, got {shown(data)}", path=str(path), line=number)
        record_id = data["id"]
        where = {"path": str(path), "line": number, "record_id": record_id}
        if record_id in sides:
            raise InputError("duplicate id", **where)
        if side not in data:
            raise InputError("missing", field=side, **where)
        try:
            sides[record_id] = model.model_validate(data[side], strict=True)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            raise InputError(f"{first['msg']}, got {shown(first['input'])}",
                             field=_field_path(side, first["loc"], data[side]), **where) from None
    return sides


def _field_path(side: str, loc: tuple[Any, ...], raw: Any) -> str:
    """A pydantic error location as the raw JSON has it (a bare-list group has no ``entities`` step)."""
    text, node = side, raw
    for step in loc:
        if step == "entities" and isinstance(node, list):
            continue
        if isinstance(step, int):
            text += f"[{step}]"
            node = node[step] if isinstance(node, list) and step < len(node) else None
        elif isinstance(node, dict):
            text += f".{step}"
            node = node.get(step)
    return text
