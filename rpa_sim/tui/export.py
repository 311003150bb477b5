"""Writing a view's rows as CSV and JSON, atomically (no Textual here)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from rpa_sim.files import atomic_write_text

__all__ = ["write_rows"]


def _clean(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def write_rows(rows: list[dict[str, Any]], folder: Path, stem: str, kind: str) -> Path:
    """Write ``rows`` to ``folder/stem.csv`` or ``.json``; returns the path."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{k: _clean(v) for k, v in row.items()} for row in rows]
    if kind == "json":
        path = folder / f"{stem}.json"
        atomic_write_text(path, json.dumps(rows, indent=2, allow_nan=False) + "\n")
        return path
    path = folder / f"{stem}.csv"
    buffer = io.StringIO()
    names = list(rows[0]) if rows else []
    writer = csv.DictWriter(buffer, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(path, buffer.getvalue())
    return path
