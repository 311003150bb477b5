"""Writing a view's rows as CSV and JSON, atomically (no Textual here)."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import uuid
from pathlib import Path
from typing import Any

__all__ = ["write_rows"]


def _clean(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _atomic_write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_rows(rows: list[dict[str, Any]], folder: Path, stem: str, kind: str) -> Path:
    """Write ``rows`` to ``folder/stem.csv`` or ``.json``; returns the path."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{k: _clean(v) for k, v in row.items()} for row in rows]
    if kind == "json":
        path = folder / f"{stem}.json"
        _atomic_write(path, json.dumps(rows, indent=2, allow_nan=False) + "\n")
        return path
    path = folder / f"{stem}.csv"
    buffer = io.StringIO()
    names = list(rows[0]) if rows else []
    writer = csv.DictWriter(buffer, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    _atomic_write(path, buffer.getvalue())
    return path
