"""What the command line prints: tables for reading, CSV and JSON for programs, and text made safe for a terminal.

The ``table`` format rounds for reading (``docs/cli.md``, "Formats"); CSV and JSON keep every number exactly.
Results go to standard output, messages to standard error.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rpa_sim.route.sweep import Curve

__all__ = ["FALLBACK_WIDTH", "MESSAGE_LIMIT", "NARROWEST", "SWEEP_SUMMARY_ROWS", "counts", "csv_text", "curve_table",
           "fitted", "json_text", "named_lines", "number", "one_line", "print_result", "print_text", "say",
           "summary_rows", "table", "terminal_width", "threshold_label", "write_or_print"]

#: The longest message printed; a longer one (a YAML file with dozens of mistakes) is cut, its length given.
MESSAGE_LIMIT = 2_000

#: The width text is fitted to when standard output is no terminal (a pipe, a file) and COLUMNS is not set.
FALLBACK_WIDTH = 80
#: The narrowest width text is fitted to, whatever the terminal says: narrower, a table's key column alone
#: would fill the line.
NARROWEST = 40
#: A table's last column wraps within the width its other columns leave when at least this many are left;
#: with fewer, the table is split into blocks of columns.
_LEAST_WRAPPED_COLUMN = 24

#: The rows a sweep's table shows per policy unless asked for every row: the ends and the auto-rates 5% apart.
SWEEP_SUMMARY_ROWS = 21

# Sweep columns that count things: expectations under an imperfect reviewer, printed as integers when whole (the
# task's own are its table type's count_columns).
_COUNT_COLUMNS = frozenset({"reviewed", "rejected", "documents_straight_through"})


def one_line(message: str) -> str:
    """``message`` as one line of bounded length, whatever it holds: the last guard before the terminal.

    What a message quotes is escaped and shortened where it is quoted
    (:func:`rpa_sim.common.errors.shown`); this catches what was not, such as a
    library's own text about a corrupt file.

    >>> print(one_line("x.jsonl: bad \\x1b[2J\\nvalue"))
    x.jsonl: bad \\x1b[2J\\nvalue
    """
    from rpa_sim.common.errors import escaped  # noqa: PLC0415

    return escaped(message, MESSAGE_LIMIT)


def say(message: str) -> None:
    """A message on standard error (``wrote FILE``, a note of an import or an export), as one line.

    Paths, field names and reasons in a message come from the user's files and options; they are escaped
    by :func:`one_line` as error messages are, so that no escape code or line break of theirs reaches the
    terminal.
    """
    print(one_line(message), file=sys.stderr)


def threshold_label(thresholds: Sequence[float], index: int) -> str:
    """A threshold for the table; the point one step above the previous one (the top of an exact grid,
    which routes everything the policy can route) reads ``>1 (all)`` rather than ``1.0000``.

    >>> threshold_label([0.5, 1.0, math.nextafter(1.0, 2.0)], 2), threshold_label([0.5, 0.75], 1)
    ('>1 (all)', '0.7500')
    """
    value = thresholds[index]
    if index and value == math.nextafter(thresholds[index - 1], math.inf):
        below = f"{thresholds[index - 1]:.4f}".rstrip("0").rstrip(".")
        return f">{below} (all)" if index == len(thresholds) - 1 else f">{below}"
    return f"{value:.4f}"


def table(rows: Sequence[tuple[str, float | int | None]]) -> str:
    """Named figures, one a line, the names aligned."""
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"  {name:<{width}}  {number(value):>10}" for name, value in rows)


def named_lines(rows: Sequence[tuple[str, str]]) -> str:
    """Named texts, one a line, the names aligned."""
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"  {name:<{width}}  {value}" for name, value in rows)


def number(value: float | int | None) -> str:
    """A figure of a table: an int is a count, a float a measure (:mod:`rpa_sim.common.formatting`);
    ``n/a`` when absent."""
    from rpa_sim.common import formatting  # noqa: PLC0415

    return (formatting.count(value, missing="n/a") if isinstance(value, int)
            else formatting.number(value, missing="n/a"))


def counts(values: list[float]) -> list[str]:
    """Expected counts as a table shows them; a column of whole numbers (the usual case) in one pass."""
    from rpa_sim.common.formatting import expected_count  # noqa: PLC0415

    if all(value.is_integer() for value in values):
        return [f"{int(value):,}" for value in values]
    return [expected_count(value, missing="n/a") for value in values]


def summary_rows(auto_rate: Sequence[float]) -> list[int]:
    """The rows of a curve that its summary shows: the first and the last, and the row nearest each auto-rate
    of 0%, 5%, ..., 100% (the earlier on a tie); fewer where the curve jumps over some.

    Spread over the auto-rate rather than over the rows, since an exact grid crowds its rows where the
    confidences crowd (near 1), and the auto-rate is what a reader of a sweep looks along.

    >>> summary_rows([1.0, 0.9, 0.8, 0.5, 0.0])
    [0, 1, 2, 3, 4]
    >>> summary_rows([1.0 - i / 1000 for i in range(1001)])[:4]
    [0, 50, 100, 150]
    >>> len(summary_rows([1.0 - i / 1000 for i in range(1001)]))
    21
    """
    import numpy as np  # noqa: PLC0415

    rates = np.asarray(auto_rate, dtype=float)
    if len(rates) <= SWEEP_SUMMARY_ROWS:
        return list(range(len(rates)))
    defined = np.where(np.isnan(rates), np.inf, rates)
    chosen = {0, len(rates) - 1}
    for target in np.linspace(0.0, 1.0, SWEEP_SUMMARY_ROWS):
        chosen.add(int(np.argmin(np.abs(defined - target))))
    return sorted(chosen)


def curve_table(curves: list[Curve], *, every_row: bool = False) -> str:
    """The sweep's rows aligned; unless ``every_row``, each policy's :func:`summary_rows` and a line that says
    how many rows there are."""
    from rpa_sim.evaluate.outcomes import table_type  # noqa: PLC0415
    from rpa_sim.route.sweep import aligned_curves  # noqa: PLC0415

    # cells are made a column at a time: an exact curve has a row per distinct confidence, often tens of thousands
    curves = aligned_curves(curves)
    names = curves[0].column_names()
    count_columns = _COUNT_COLUMNS | table_type(curves[0].task).count_columns
    columns: list[list[str]] = [[name] for name in names]
    shown = total = 0
    for curve in curves:
        rows = list(range(len(curve))) if every_row else summary_rows(curve.auto_rate.tolist())
        shown, total = shown + len(rows), total + len(curve)
        thresholds = curve.threshold.tolist()
        for cells, name in zip(columns, names):
            if name == "policy":
                cells.extend([curve.policy] * len(rows))
            elif name == "threshold":
                cells.extend(threshold_label(thresholds, index) for index in rows)
            else:
                values = curve.columns[name][rows]
                cells.extend(counts(values.astype(float).tolist()) if name in count_columns
                             else map(number, values.tolist()))
    widths = [max(map(len, cells)) for cells in columns]
    padded = [[cell.rjust(width) for cell in cells] for cells, width in zip(columns, widths)]
    text = "\n".join(map("  ".join, zip(*padded)))
    if shown == total:
        return text
    return (f"{text}\n{shown:,} of {total:,} rows, spread evenly over the auto-rate; every row: --all-rows, "
            f"--format csv or --format json")


def json_text(payload: Any) -> str:
    from rpa_sim.common.jsontext import dumps  # noqa: PLC0415

    return dumps(payload, indent=2)


def csv_text(rows: list[dict[str, Any]]) -> str:
    """Rows of one shape as CSV: a header line, then a line per row; ``None`` (and NaN, infinity) is an empty cell."""
    import csv  # noqa: PLC0415
    import io  # noqa: PLC0415

    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(rows[0])
    for row in rows:
        writer.writerow(["" if value is None or (isinstance(value, float) and not math.isfinite(value))
                         else repr(value) if isinstance(value, float) else value for value in row.values()])
    return text.getvalue()


def terminal_width() -> int:
    """The width the text of a table format is fitted to: ``COLUMNS`` when set, else the terminal's, else
    :data:`FALLBACK_WIDTH` (standard output is a pipe or a file); never below :data:`NARROWEST`.

    The same width gives the same text: a pipe gets 80 columns, whatever terminal it was started from.
    """
    import shutil  # noqa: PLC0415

    return max(shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns, NARROWEST)


def fitted(text: str, width: int) -> str:
    r"""``text`` fitted to ``width`` columns: a table (a header line over a rule of dashes, then its rows up to a
    blank line) wider than that wraps its last column, or is split into blocks of columns that fit, each
    repeating its leading text columns (those aligned left: the policy, the operating point); any other line
    longer than that is wrapped, its continuation indented two more than it. A line that fits is left as it is,
    so a text that fits comes back unchanged.

    >>> table = "policy       AUC  dominated by\n----------  ----  ------------\nconfidence  0.95  per-field, x"
    >>> print(fitted(table, 26))
    policy       AUC
    ----------  ----
    confidence  0.95
    <BLANKLINE>
    policy      dominated by
    ----------  ------------
    confidence  per-field, x
    >>> print(fitted("  team: 4 people a shift, 2 shifts (07–13 h, 13–19 h), 1 more a shift than planned", 40))
      team: 4 people a shift, 2 shifts
        (07–13 h, 13–19 h), 1 more a shift
        than planned
    """
    lines, out, index = text.split("\n"), [], 0
    while index < len(lines):
        if index + 1 < len(lines) and lines[index].strip() and _is_rule(lines[index + 1]):
            end = index + 2
            while end < len(lines) and lines[end].strip():
                end += 1
            out += _fitted_table(lines[index:end], width)
            index = end
        else:
            out += _wrapped(lines[index], width)
            index += 1
    return "\n".join(out)


def _is_rule(line: str) -> bool:
    return line.startswith("-") and set(line) <= {"-", " "}


def _wrapped(line: str, width: int) -> list[str]:
    import textwrap  # noqa: PLC0415

    if len(line) <= width:
        return [line]
    hanging = " " * (len(line) - len(line.lstrip()) + 2)
    return textwrap.wrap(line, width, subsequent_indent=hanging, break_long_words=False, break_on_hyphens=False)


def _fitted_table(lines: list[str], width: int) -> list[str]:
    """A table's lines within ``width``: its last column wrapped in the room the others leave, or, without room
    enough, its columns in blocks, each block headed by the leading columns aligned left."""
    import re  # noqa: PLC0415
    import textwrap  # noqa: PLC0415

    if max(map(len, lines)) <= width:
        return lines
    spans = [(found.start(), found.end()) for found in re.finditer(r"-+", lines[1])]
    last = spans[-1][0]
    if len(spans) > 1 and width - last >= _LEAST_WRAPPED_COLUMN:
        fitted_lines = [lines[0][:width].rstrip(), lines[1][:width]]
        for line in lines[2:]:
            cells = textwrap.wrap(line[last:].strip(), width - last, break_long_words=False,
                                  break_on_hyphens=False) or [""]
            fitted_lines += [(line[:last] + cells[0]).rstrip(), *(" " * last + cell for cell in cells[1:])]
        return fitted_lines

    def cell(line: str, column: int) -> str:
        start, end = spans[column]
        return (line[start:] if column == len(spans) - 1 else line[start:end]).ljust(end - start)

    def left_aligned(column: int) -> bool:  # names rather than figures: every cell starts at the column's left
        cells = [cell(line, column) for line in lines[:1] + lines[2:]]
        return all(not text[:1].isspace() for text in cells if text.strip()) and any(
            text.endswith(" ") for text in cells)

    keys = 1
    while keys < len(spans) - 1 and left_aligned(keys):
        keys += 1
    key = sum(end - start for start, end in spans[:keys]) + 2 * (keys - 1)
    blocks: list[list[int]] = [[]]
    used = key
    for column in range(keys, len(spans)):
        span = spans[column][1] - spans[column][0]
        if blocks[-1] and used + 2 + span > width:
            blocks.append([])
            used = key
        blocks[-1].append(column)
        used += 2 + span
    fitted_lines = []
    for block in blocks:
        if fitted_lines:
            fitted_lines.append("")
        fitted_lines += ["  ".join(cell(line, column) for column in (*range(keys), *block)).rstrip()
                         for line in lines]
    return fitted_lines


def print_result(form: str, texts: Mapping[str, Callable[[], str]]) -> None:
    """A command's result on standard output in the format asked for (``texts`` makes each), the table format
    :func:`fitted` to the terminal's width (docs/cli.md, "Widths")."""
    text = texts[form]()
    print_text(fitted(text, terminal_width()) if form == "table" else text)


def print_text(text: str) -> None:
    """A result on standard output, ending with one line end."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def write_or_print(text: str, out: Path | None) -> None:
    """A result into the file ``out`` (atomically; ``wrote`` on standard error), or printed without one."""
    if out is None:
        print_text(text)
        return
    from rpa_sim.common.files import atomic_write_text  # noqa: PLC0415

    atomic_write_text(out, text if text.endswith("\n") else text + "\n")
    say(f"wrote {out}")
