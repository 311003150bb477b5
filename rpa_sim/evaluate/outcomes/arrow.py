"""An outcome table's columns in Arrow: the column specifications, numpy to Arrow, and Arrow back, checked.

Each table type says how it lies in a file (its :class:`FileLayout`: columns
in order, kinds of rows, settings and counts of the metadata) and turns
itself into Arrow arrays and back (``to_arrow``, ``from_arrow``) with the
helpers here; :mod:`rpa_sim.evaluate.tablefile` writes and reads the Parquet
file around them and knows no task. ``docs/formats.md`` ("Outcome tables
(Parquet)") describes every column.

pyarrow is imported by the functions that use it: a table evaluated from
records and never written needs none of it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NoReturn, Protocol, cast

import numpy as np

from rpa_sim.common.errors import InputError, shown
from rpa_sim.evaluate.outcomes.columns import STRINGS

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["FileColumn", "FileLayout", "FileFacts", "FileRows", "DeferredText", "UNIT", "AT_LEAST_0",
           "FINITE_AT_LEAST_0", "QUOTE", "SIGNAL_PREFIX", "arrow_type", "strings", "named", "whole_numbers", "numbers",
           "spread"]

ArrowType = Literal["string", "int32", "int64", "double"]
#: A number column's bounds: in [0, 1]; at least 0 (infinity included); finite and at least 0.
UNIT = (0.0, 1.0)
AT_LEAST_0 = (0.0, math.inf)
FINITE_AT_LEAST_0 = (0.0, sys.float_info.max)
#: values in messages are quoted as Python writes its strings, as the rest of the messages are
QUOTE = "'"
#: A named signal's column is ``signal.NAME`` (docs/formats.md); the metadata's ``signals`` lists the names.
SIGNAL_PREFIX = "signal."
# each Arrow type's pyarrow factory and numpy dtype
_ARROW_FACTORIES = {"string": "string", "int32": "int32", "int64": "int64", "double": "float64"}
_NUMPY_TYPES = {"int32": np.int32, "int64": np.int64, "double": np.float64}


@dataclass(frozen=True)
class FileColumn:
    """A column of the file: its Arrow type, the row kinds that have a value, and whether those may be null."""

    name: str
    # as Arrow prints it; :func:`arrow_type` makes it
    type: ArrowType
    kinds: tuple[str, ...]
    nullable: bool = False
    # repeated strings (keys, kinds, labels) are dictionary-encoded in the file
    dictionary: bool = False
    # read as indices into a list of names (the fields, the kinds, the labels), not as strings
    coded: bool = False
    # absent from files written before the column was added: such files still read, with its default
    optional: bool = False
    # the values a number column may hold where it has one (NaN never: "no value" is null)
    bounds: tuple[float, float] = (-sys.float_info.max, sys.float_info.max)

    def expected(self) -> str:
        """What the column's values must be, for a message: ``a number in [0, 1]``, ``a finite number``, ...

        >>> FileColumn("anls", "double", ("question",), nullable=True, bounds=UNIT).expected()
        'a number in [0, 1] or null'
        """
        low, high = self.bounds
        number = "a whole number" if self.type.startswith("int") else "a number"
        if high == 1.0:
            text = f"{number} in [{low:g}, {high:g}]"
        elif high == math.inf:
            text = f"{number} at least {low:g}"
        else:
            text = f"a finite number{'' if low < 0 else f' at least {low:g}'}"
        return text + (" or null" if self.nullable else "")


@dataclass(frozen=True)
class FileLayout:
    """How a task's table lies in a file.

    Attributes
    ----------
    columns : tuple of FileColumn
        The columns, in the file's order.
    row_kinds : tuple of str
        The kinds of rows, in the order they come in the file.
    settings : tuple of str
        The evaluation settings the metadata names.
    counts : tuple of str
        The corpus counts the metadata names.
    signal_rows : tuple of str
        The kinds of rows that carry named signals (a column ``signal.NAME`` each, :meth:`with_signals`).
    """

    columns: tuple[FileColumn, ...]
    row_kinds: tuple[str, ...]
    settings: tuple[str, ...]
    counts: tuple[str, ...]
    signal_rows: tuple[str, ...] = ()

    def with_signals(self, names: Sequence[str]) -> FileLayout:
        """This layout with a column per named signal after the others: ``signal.NAME``, a number in [0, 1] or
        null (the value lacks it)."""
        added = tuple(FileColumn(SIGNAL_PREFIX + name, "double", self.signal_rows, nullable=True, bounds=UNIT)
                      for name in names)
        return replace(self, columns=(*self.columns, *added))


class FileFacts(Protocol):
    """What a file's metadata says of its table (:class:`rpa_sim.evaluate.tablefile.TableMetadata`)."""

    @property
    def settings(self) -> Mapping[str, str | float]: ...

    @property
    def fields(self) -> tuple[str, ...]: ...

    @property
    def rows(self) -> Mapping[str, int]: ...

    @property
    def counts(self) -> Mapping[str, int]: ...

    @property
    def signals(self) -> tuple[str, ...]: ...


def arrow_type(name: ArrowType) -> pa.DataType:
    """The Arrow type a column specification names (``"double"`` is float64)."""
    import pyarrow as pa  # noqa: PLC0415

    return getattr(pa, _ARROW_FACTORIES[name])()


# --------------------------------------------------------------------------- numpy to Arrow


# pyarrow's conversion of Python objects and numpy arrays (``pa.array``) imports pandas when it is installed, a
# fifth of a second on the first column written, in every process that writes a table: the columns are built from
# their buffers instead, as they are read (:func:`_values`).


def strings(values: np.ndarray | Sequence[str | None]) -> pa.Array:
    """A text column; None is null."""
    import pyarrow as pa  # noqa: PLC0415

    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    try:
        encoded = [b"" if item is None else item.encode() for item in items]
    except UnicodeEncodeError:  # a lone surrogate: pyarrow's conversion says which value
        return pa.array(items, type=pa.string())
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(items)), out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:  # past a string column's offsets: pyarrow's conversion splits it
        return pa.array(items, type=pa.string())
    valid = np.fromiter((item is not None for item in items), dtype=bool, count=len(items))
    return pa.Array.from_buffers(pa.string(), len(items), [_validity(valid), pa.py_buffer(offsets.astype(np.int32)),
                                                          pa.py_buffer(b"".join(encoded))])


def named(codes: np.ndarray, names: Sequence[str]) -> pa.Array:
    """Each code's name as a string column."""
    import pyarrow as pa  # noqa: PLC0415

    return pa.DictionaryArray.from_arrays(whole_numbers(codes, "int32"), strings(names)).dictionary_decode()


def whole_numbers(values: np.ndarray, type_name: Literal["int32", "int64"]) -> pa.Array:
    """An integer column, every value present."""
    import pyarrow as pa  # noqa: PLC0415

    data = np.ascontiguousarray(values, dtype=_NUMPY_TYPES[type_name])
    return pa.Array.from_buffers(arrow_type(type_name), len(data), [None, pa.py_buffer(data)])


def numbers(values: np.ndarray) -> pa.Array:
    """A float column; NaN (unknown, undefined) is written as null, so that SQL aggregates skip it."""
    import pyarrow as pa  # noqa: PLC0415

    data = np.ascontiguousarray(values, dtype=np.float64)
    return pa.Array.from_buffers(pa.float64(), len(data), [_validity(~np.isnan(data)), pa.py_buffer(data)])


def _validity(valid: np.ndarray) -> pa.Buffer | None:
    """Arrow's validity bitmap of a column (none when every value is present)."""
    import pyarrow as pa  # noqa: PLC0415

    return None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))


def spread(type_name: ArrowType, *parts: pa.Array | int) -> pa.Array:
    """One column from its part in each kind of row: values, or a count of null rows."""
    import pyarrow as pa  # noqa: PLC0415

    type_ = arrow_type(type_name)
    return pa.concat_arrays([pa.nulls(part, type_) if isinstance(part, int) else part for part in parts])


# --------------------------------------------------------------------------- Arrow to numpy, checked


class FileRows:
    """The columns of a file, checked against its metadata, sliced by row kind.

    Made by :func:`rpa_sim.evaluate.tablefile.read_table`, read by a table
    type's ``from_arrow``. Every check refuses the file with an
    :class:`~rpa_sim.common.errors.InputError` naming it.

    Parameters
    ----------
    path : pathlib.Path
        The file, for messages.
    data : pyarrow.Table
        Its columns, those read as codes as dictionary arrays.
    layout : FileLayout
        Its task's layout.
    facts : FileFacts
        What its metadata says: settings, fields, rows per kind, counts.
    """

    def __init__(self, path: Path, data: pa.Table, layout: FileLayout, facts: FileFacts) -> None:
        self.path, self.data, self.facts = path, data, facts
        present = [column for column in layout.columns if column.name in data.column_names]
        self.spec = {column.name: column for column in present}
        self.types = {column.name: column.type for column in present}
        counts = [facts.rows[kind] for kind in layout.row_kinds]
        if data.num_rows != sum(counts):
            self.refuse(f"has {data.num_rows} rows, and its metadata says {sum(counts)}")
        bounds = np.cumsum([0, *counts])
        self.ranges = {kind: (int(bounds[i]), int(bounds[i + 1])) for i, kind in enumerate(layout.row_kinds)}
        for column in present:
            for kind, (start, stop) in self.ranges.items():
                nulls = data.column(column.name).slice(start, stop - start).null_count
                if kind in column.kinds and nulls and not column.nullable:
                    self.refuse(f"column {column.name!r} has nulls in {kind} rows")
                if kind not in column.kinds and nulls != stop - start:
                    self.refuse(f"column {column.name!r} has values in {kind} rows, which have none")

    def refuse(self, problem: str, *, record_id: str | None = None) -> NoReturn:
        raise InputError(f"not a valid rpa-sim outcome table: {problem}", path=str(self.path), record_id=record_id)

    def unique_ids(self, name: str, kind: str) -> np.ndarray:
        """The ids of column ``name`` in the rows of ``kind``, refused when one is given twice.

        As the file is written, the rows are the codes 0, 1, 2, ... of a dictionary that lists each id once: the
        ids are its values, read once. Any other column read as codes is told from the codes and each chunk's
        distinct values, without a string per row: the rows' codes are distinct, and so are the values they name
        across the chunks.
        """
        column = self.column(name, kind)
        if _codes_in_order(column):
            listed = column.chunks[0].dictionary.to_pylist()
            if len(set(listed)) == len(listed):
                return np.array(listed, dtype=STRINGS)
        parts, rows, fine = [np.zeros(0, dtype=STRINGS)], 0, column.null_count == 0
        seen: set[str] = set()
        for chunk in column.chunks:
            fine = fine and hasattr(chunk, "dictionary")
            if not fine:  # a column read as text: its values are read below
                break
            distinct = chunk.dictionary.to_pylist()
            codes = _values(chunk.indices, np.int32) if len(chunk) else np.zeros(0, np.int32)
            fine = not len(codes) or (codes.min() >= 0 and codes.max() < len(distinct))
            if fine:
                # (a count, not np.unique, which imports numpy.ma: 25 ms of a table command's start)
                used = np.flatnonzero(np.bincount(codes, minlength=len(distinct)))
                seen.update(map(distinct.__getitem__, used.tolist()))
                rows += len(codes)
                parts.append(np.array(distinct, dtype=STRINGS)[codes])
        if fine and len(seen) == rows:
            return np.concatenate(parts)
        # a repeated id (or a null): the rows that repeat it are named from the text
        ids = _text_values(column)
        if len(set(ids)) != len(ids):
            first: dict[str | None, int] = {}
            for row, unit_id in enumerate(ids):
                if first.setdefault(unit_id, row) != row:
                    start = self.ranges[kind][0]
                    self.refuse(f"column {name!r} repeats this id in rows {start + first[unit_id]} and {start + row} "
                                f"(counting from 0): ids are unique", record_id=unit_id)
        return np.array(ids, dtype=STRINGS)

    def id_codes(self, name: str, ids: np.ndarray, ids_kind: str, *kinds: str) -> np.ndarray:
        """Each row of ``kinds``'s index into ``ids``, the :meth:`unique_ids` of the rows of ``ids_kind``; refused when
        a row names an id that is not one of them.

        As the file is written, the ids' rows list the column's distinct values in order, and every other row's
        code is already its index (a KIE entity row's document), with no string read.
        """
        column = self.column(name, *kinds)
        ids_column = self.column(name, ids_kind)
        if len(column.chunks) == 1 and _codes_in_order(ids_column):
            chunk = column.chunks[0]
            if (hasattr(chunk, "dictionary") and not chunk.null_count
                    and chunk.dictionary.equals(ids_column.chunks[0].dictionary)):
                return _values(chunk.indices, np.int32)
        return self.codes(name, ids.tolist(), *kinds)

    def column(self, name: str, *kinds: str) -> pa.ChunkedArray:
        """The rows of ``kinds`` (consecutive) of column ``name``."""
        start, stop = self.ranges[kinds[0]][0], self.ranges[kinds[-1]][1]
        return self.data.column(name).slice(start, stop - start)

    def numbers(self, name: str, *kinds: str, dtype: type = np.float64) -> np.ndarray:
        """A numeric column's rows of ``kinds`` as a (writable) numpy array of ``dtype``; null is NaN.

        Values outside the column's bounds, infinities and NaN (which the
        file writes as null) are refused, naming the first such row.
        """
        stored = _NUMPY_TYPES[self.types[name]]
        column = self.column(name, *kinds)
        values = np.concatenate([np.zeros(0, stored), *(_values(chunk, stored) for chunk in column.chunks)])
        if column.null_count < len(values):
            self._check_bounds(name, kinds[0], column, values)
        return values.astype(dtype)

    def _check_bounds(self, name: str, kind: str, column: pa.ChunkedArray, values: np.ndarray) -> None:
        """Refuse the first value outside the column's bounds (NaN among them); nulls, read as NaN, pass."""
        spec = self.spec[name]
        low, high = spec.bounds
        if column.null_count:
            # a NaN beyond the nulls was written as a value; fmin and fmax skip the nulls' NaN
            fits = np.count_nonzero(np.isnan(values)) == column.null_count
            lowest, highest = np.fmin.reduce(values), np.fmax.reduce(values)
        else:
            fits, lowest, highest = True, values.min(), values.max()
        if fits and low <= lowest and highest <= high:  # NaN fails both comparisons
            return
        valid = np.array([value is not None for value in column.to_pylist()], dtype=bool)
        with np.errstate(invalid="ignore"):
            row = int(np.flatnonzero(valid & ~((values >= low) & (values <= high)))[0])
        self.refuse(f"column {name!r} holds {shown(values[row].item())} in row {self.ranges[kind][0] + row} "
                    f"(counting from 0); expected {spec.expected()}")

    def codes(self, name: str, names: Sequence[str], *kinds: str) -> np.ndarray:
        """A dictionary column's rows of ``kinds`` (every row without), free of nulls, as indices into ``names``."""
        column = self.column(name, *kinds) if kinds else self.data.column(name)
        names = list(names)
        position: dict[str, int] | None = None
        parts = [np.zeros(0, dtype=np.int32)]
        for chunk in column.chunks:
            # the chunk's few distinct values mapped to ``names``, then each row's index into them
            distinct = chunk.dictionary.to_pylist()
            if distinct == names:  # (document ids: the very names, in their order)
                parts.append(_values(chunk.indices, np.int32))
                continue
            if position is None:
                position = {value: code for code, value in enumerate(names)}
            unknown = [value for value in distinct if value not in position]
            if unknown:
                self.refuse(f"column {name!r} holds {shown(unknown[0], quote=QUOTE)}, which is not one of "
                            f"{shown(list(names), quote=QUOTE)}")
            lookup = np.array([position[value] for value in distinct], dtype=np.int32)
            parts.append(lookup[_values(chunk.indices, np.int32)])
        return np.concatenate(parts)

    def strings(self, name: str, *kinds: str) -> np.ndarray:
        return DeferredText(self.column(name, *kinds))()

    def deferred_strings(self, name: str, *kinds: str) -> DeferredText:
        """A text column to convert when first read (:class:`~rpa_sim.evaluate.outcomes.columns.DeferredColumn`)."""
        return DeferredText(self.column(name, *kinds))

    def signals(self, kind: str) -> dict[str, np.ndarray]:
        """The named signals' columns (the metadata's ``signals``) in the rows of ``kind``."""
        return {name: self.numbers(SIGNAL_PREFIX + name, kind) for name in self.facts.signals}

    def optional_numbers(self, name: str, kind: str) -> np.ndarray:
        """:meth:`numbers` of one kind of rows; all NaN for an optional column the file lacks (an older file)."""
        if name not in self.types:
            return np.full(self.facts.rows[kind], np.nan)
        return self.numbers(name, kind)

    def document_types(self, kind: str) -> tuple[tuple[str, ...], np.ndarray]:
        """The ``document_type`` names in order of first appearance, and each row's code (all ``""`` in older files)."""
        rows = self.facts.rows[kind]
        if "document_type" not in self.types:
            return ("",) if rows else (), np.zeros(rows, dtype=np.int32)
        values = cast(list[str], _text_values(self.column("document_type", kind)))
        names = {name: code for code, name in enumerate(dict.fromkeys(values))}
        return tuple(names), np.fromiter(map(names.__getitem__, values), dtype=np.int32, count=len(values))


@dataclass(frozen=True)
class DeferredText:
    """A text column's Arrow data, as numpy strings when called; picklable, so a table read on a Dask worker
    ships its text unconverted."""

    column: pa.ChunkedArray

    def __call__(self) -> np.ndarray:
        return np.array(_text_values(self.column), dtype=STRINGS)


def _codes_in_order(column: pa.ChunkedArray) -> bool:
    """Whether ``column`` is one chunk of codes 0, 1, 2, ... into its dictionary, which it lists whole, as the ids'
    rows of a file are written: the rows' values are then the dictionary's, in order."""
    if len(column.chunks) != 1 or column.null_count:
        return False
    chunk = column.chunks[0]
    return (hasattr(chunk, "dictionary") and len(chunk.dictionary) == len(chunk)
            and np.array_equal(_values(chunk.indices, np.int32), np.arange(len(chunk), dtype=np.int32)))


def _text_values(column: pa.ChunkedArray) -> list[str | None]:
    """A text column's values; a column read as codes is decoded first (``to_pylist`` of codes is 40 times slower)."""
    return [value for chunk in column.chunks
            for value in (chunk.dictionary_decode() if hasattr(chunk, "dictionary") else chunk).to_pylist()]


def _values(chunk: pa.Array, dtype: type) -> np.ndarray:
    """A numeric Arrow array as numpy, NaN where null: a view of its buffers.

    Not ``to_numpy``, whose conversion imports pandas when it is installed (a
    few tenths of a second, more than reading the table).
    """
    if len(chunk) == 0:
        return np.zeros(0, dtype)
    start, stop = chunk.offset, chunk.offset + len(chunk)
    validity, data = chunk.buffers()[:2]
    values: np.ndarray = np.frombuffer(data, dtype=dtype)[start:stop]
    if chunk.null_count:
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), count=stop, bitorder="little")[start:]
        values = np.where(valid.astype(bool), values, np.nan)
    return values
