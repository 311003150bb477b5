"""Writing a view's rows as CSV and JSON, atomically, under names that say what they hold (no Textual here)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

from rpa_sim.common.files import atomic_write_text

__all__ = ["DECIMALS", "export_stem", "write_rows"]

#: decimals an exported float keeps: finer than any figure the dashboard shows, free of binary noise
DECIMALS = 6


def _clean(value: Any) -> Any:
    """A value as exported: floats rounded to :data:`DECIMALS`, non-finite floats empty.

    >>> _clean(1455.364999999707), _clean(0.1 + 0.2), _clean(float("nan")), _clean(3)
    (1455.365, 0.3, None, 3)
    """
    if isinstance(value, float):
        return round(value, DECIMALS) if math.isfinite(value) else None
    return value


def export_stem(view: str, *, policy: str | None = None, threshold: float | None = None) -> str:
    """The name of an export without its suffix: ``rpa-sim-VIEW[-POLICY][-tauT]``, with the policy and τ
    when the rows depend on them; characters unfit for a file name become ``_``.

    >>> export_stem("fields", policy="document-escalation", threshold=0.86)
    'rpa-sim-fields-document-escalation-tau0.86'
    >>> export_stem("tradeoff", threshold=1.0), export_stem("costs", policy="my policy/v2")
    ('rpa-sim-tradeoff-tau1', 'rpa-sim-costs-my_policy_v2')
    """
    parts = ["rpa-sim", view]
    if policy is not None:
        parts.append(re.sub(r"[^A-Za-z0-9._-]+", "_", policy))
    if threshold is not None:
        parts.append(f"tau{round(threshold, DECIMALS):g}")
    return "-".join(parts)


def write_rows(rows: list[dict[str, Any]], folder: Path, stem: str, kind: str) -> Path:
    """Write ``rows`` to ``folder/stem.csv`` or ``.json`` (floats rounded to :data:`DECIMALS`); returns the path."""
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
