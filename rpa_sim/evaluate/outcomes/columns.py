"""The numpy columns of an outcome table: built while records stream in, joined across tables, read lazily.

What every task's table does with its columns alike: text columns that a
file converts only when asked (:class:`DeferredColumn`), names coded in order
of first appearance (:class:`Vocabulary`), compact arrays turned into numpy
columns, and the joining of several tables' columns into one
(:func:`concatenated`).
"""

from __future__ import annotations

import math
from array import array
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import datetime

__all__ = ["STRINGS", "DeferredColumn", "Vocabulary", "SignalColumns", "packed", "epoch_seconds", "mean_or_none",
           "merged_names", "merged_signals", "concatenated"]

#: The dtype of text columns: numpy's variable-width strings.
STRINGS = np.dtypes.StringDType()


class DeferredColumn:
    """A text column that may be given as a loader: a zero-argument callable, called on first access.

    Stage 2 reads numbers, not the values' text, so a table read from a file
    (:mod:`rpa_sim.evaluate.tablefile`) converts its text columns only when something
    asks for them (a production log, an export, a file written again). A
    dataclass field whose default is this descriptor has no default
    (``__get__`` on the class raises AttributeError), and the dataclass's
    ``__init__`` stores through :meth:`__set__`, frozen or not.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Texts:
    ...     text: DeferredColumn = DeferredColumn()
    >>> Texts(lambda: np.array(["a", "b"])).text.tolist(), Texts(np.array(["c"])).text.tolist()
    (['a', 'b'], ['c'])
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}_column"

    def __get__(self, instance: Any, owner: type | None = None) -> np.ndarray:
        if instance is None:
            raise AttributeError(self.slot)  # no default: the field stays required
        value = instance.__dict__[self.slot]
        if callable(value):
            value = value()
            instance.__dict__[self.slot] = value
        return value

    def __set__(self, instance: Any, value: np.ndarray | Callable[[], np.ndarray]) -> None:
        instance.__dict__[self.slot] = value


class Vocabulary:
    """Codes for repeated strings (keys, types), in order of first appearance.

    >>> names = Vocabulary()
    >>> [names.code(name) for name in ("total", "date", "total")], names.names()
    ([0, 1, 0], ('total', 'date'))
    """

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}

    def code(self, name: str) -> int:
        return self.codes.setdefault(name, len(self.codes))

    def names(self) -> tuple[str, ...]:
        return tuple(self.codes)


class SignalColumns:
    """A column per named signal, grown row by row while records stream in; NaN where a row lacks a signal.

    A signal first met after some rows starts with NaN for them: a missing signal is unknown, never invented.

    >>> columns = SignalColumns()
    >>> columns.pad(1)
    >>> columns.add([None, {"agreement": 0.8}])
    >>> columns.add([{"logprob": 0.99, "agreement": None}])
    >>> columns.pad(1)
    >>> {name: column.tolist() for name, column in columns.columns().items()}
    {'agreement': [nan, nan, 0.8, nan, nan], 'logprob': [nan, nan, nan, 0.99, nan]}
    """

    def __init__(self) -> None:
        self.rows = 0
        self.values: dict[str, array] = {}

    def pad(self, rows: int) -> None:
        """``rows`` rows without any signal."""
        self.rows += rows
        for column in self.values.values():
            column.extend(array("d", [math.nan]) * rows)

    def add(self, signals: list[Mapping[str, float | None] | None]) -> None:
        """One row per item of ``signals``: a row's signals by name (None or null: missing)."""
        start = self.rows
        self.rows += len(signals)
        for given in signals:
            for name in given or ():
                if name not in self.values:
                    self.values[name] = array("d", [math.nan]) * start
        for name, column in self.values.items():
            column.extend([math.nan if given is None or given.get(name) is None else given[name]
                           for given in signals])

    def columns(self) -> dict[str, np.ndarray]:
        """The signals' columns, in order of first appearance."""
        return {name: packed(column) for name, column in self.values.items()}


def packed(values: array, dtype: type = np.float64) -> np.ndarray:
    """A compact :class:`array.array` grown while records streamed in, as a numpy column of ``dtype``."""
    return np.frombuffer(values, dtype=dtype).copy()


def epoch_seconds(moment: datetime | None) -> float:
    """Seconds since 1970-01-01T00:00:00Z; NaN when unknown."""
    return math.nan if moment is None else moment.timestamp()


def mean_or_none(values: np.ndarray) -> float | None:
    """The mean of the known (not NaN) values, None when none is known.

    >>> mean_or_none(np.array([1.0, np.nan, 2.0])), mean_or_none(np.array([np.nan]))
    (1.5, None)
    """
    known = values[~np.isnan(values)]
    if not len(known):
        return None
    with np.errstate(over="ignore"):
        mean = float(known.mean())
    if math.isinf(mean) and np.isfinite(known).all():
        # the sum of huge deviations (answers near 1e308) overflows where their mean does not
        mean = float(np.sum(known / len(known)))
    return mean


def merged_names(vocabularies: list[tuple[str, ...]]) -> tuple[tuple[str, ...], list[np.ndarray]]:
    """Several vocabularies' names in order of first appearance, and each one's codes in the merged vocabulary.

    >>> names, codes = merged_names([("a", "b"), ("c", "a")])
    >>> names, [c.tolist() for c in codes]
    (('a', 'b', 'c'), [[0, 1], [2, 0]])
    """
    merged = Vocabulary()
    recoded = [np.array([merged.code(name) for name in names], dtype=np.int32) for names in vocabularies]
    return merged.names(), recoded


def merged_signals(tables: list[Any]) -> dict[str, np.ndarray]:
    """The tables' signal columns joined: every name any table has, in order of first appearance, NaN in the rows
    of a table that lacks it.

    >>> from types import SimpleNamespace as Table
    >>> one = Table(signals={"a": np.array([0.1])}, confidence=np.zeros(1))
    >>> two = Table(signals={"b": np.array([0.2, 0.3])}, confidence=np.zeros(2))
    >>> {name: column.tolist() for name, column in merged_signals([one, two]).items()}
    {'a': [0.1, nan, nan], 'b': [nan, 0.2, 0.3]}
    """
    names = dict.fromkeys(name for table in tables for name in table.signals)
    return {name: np.concatenate([table.signals.get(name, np.full(len(table.confidence), np.nan))
                                  for table in tables]) for name in names}


def concatenated(tables: list[Any], merged: dict[str, Any]) -> dict[str, Any]:
    """The fields of the tables' concatenation: ``merged`` as given, other arrays joined, settings shared.

    Raises
    ------
    ValueError
        When a setting (a field that is not an array) differs between the tables.
    """
    joined: dict[str, Any] = {}
    for field in fields(tables[0]):
        values = [getattr(table, field.name) for table in tables]
        if field.name in merged:
            joined[field.name] = merged[field.name]
        elif isinstance(values[0], np.ndarray):
            joined[field.name] = np.concatenate(values)
        elif any(value != values[0] for value in values):
            raise ValueError(f"tables must be evaluated with the same {field.name}, got {values}")
        else:
            joined[field.name] = values[0]
    return joined
