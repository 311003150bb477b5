"""How the dashboard writes its figures as text: a table's cell, and labelled figures in columns (no Textual here)."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len

from rpa_sim.common.formatting import count, number

__all__ = ["cell", "figure_columns"]


def cell(value: Any, digits: int = 4) -> str:
    """A table's cell: an int is a count, a float a measure with ``digits`` decimals
    (:mod:`rpa_sim.common.formatting`)."""
    if value is None or isinstance(value, float):
        return number(value, digits)
    if isinstance(value, int) and not isinstance(value, bool):
        return count(value)
    return str(value)


def figure_columns(entries: list[tuple[str, str]], *, columns: int) -> list[str]:
    """``(label, value)`` entries in ``columns`` columns, filled column by column, each label padded to its
    column's and each value right-aligned.

    >>> figure_columns([("a", "1"), ("bb", "22"), ("c", "3")], columns=2)
    ['a   1   c 3', 'bb 22']
    """
    rows = -(-len(entries) // columns)
    chunks = [entries[c * rows:(c + 1) * rows] for c in range(columns)]
    labels = [max((cell_len(name) for name, _ in chunk), default=0) for chunk in chunks]
    values = [max((cell_len(value) for _, value in chunk), default=0) for chunk in chunks]
    return ["   ".join(f"{chunk[r][0]:<{labels[c]}} {chunk[r][1]:>{values[c]}}" for c, chunk in enumerate(chunks)
                       if r < len(chunk)) for r in range(rows)]
