"""Reading the JSON files of real formats, with errors that name the file, line and field."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from rpa_sim.common.errors import InputError
from rpa_sim.common.inputs import read_input

__all__ = ["load_json", "parse_line", "show", "FieldChecks"]

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
