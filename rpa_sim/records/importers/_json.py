"""Reading the JSON files of real formats, with errors that name the file, line and field."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.inputs import input_lines, read_input

__all__ = ["load_json", "parse_line", "show", "FieldChecks", "read_record_side"]

Side = TypeVar("Side", bound=BaseModel)

_LARGEST_FLOAT = sys.float_info.max


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
        # an integer past a double's range is not finite either (math.isfinite would raise on it)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, int) and (
                abs(value) > _LARGEST_FLOAT)) or not math.isfinite(value):
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
