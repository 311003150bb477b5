"""The signals of an outcome table measured whole or by part, and the cheapest set: what ``rpa-sim signals``
shows (a study keeps its own figures, :mod:`rpa_sim.route.signals.results`).

A table's signals are its ``confidence`` (the default signal, when any row has one) and its named signals
(``table.signals``); errors are the table's ``errors()`` (``docs/errors.md``) and documents its review units.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.route.signals.analysis import Certification, SignalsAnalysis, analyse_signals
from rpa_sim.route.signals.columns import signal_columns, table_signals
from rpa_sim.route.signals.subsets import MOST_SIGNALS, SubsetSearch, check_costs, search_subsets

__all__ = ["SignalsPart", "analyse_table"]


@dataclass(frozen=True, eq=False)
class SignalsPart:
    """The signals of one part of the data (all of it, a field or a document type).

    Attributes
    ----------
    name : str or None
        The part (None: all the data).
    values, errors : int
        The values (rows) and the errors among them.
    analysis : SignalsAnalysis
    subsets : SubsetSearch or None
        The search for the cheapest set, when costs or a target were given.
    """

    name: str | None
    values: int
    errors: int
    analysis: SignalsAnalysis
    subsets: SubsetSearch | None


def analyse_table(table: OutcomeTable, *, by: Literal["field", "document_type"] | None = None,
                  certification: Certification | None = None, costs: Mapping[str, float] | None = None,
                  target_auto_rate: float | None = None) -> list[SignalsPart]:
    """Every signal of the table measured, with the fused signal, on all the data or on each part (``by``).

    Parameters
    ----------
    table : OutcomeTable
    by : {"field", "document_type"}, optional
        Measure each field (KIE key, VQA question type) or each document type on its own, the fused
        signal learnt within it.
    certification : Certification, optional
        Certify each signal's threshold (``rpa-sim certify``'s procedure); needed for the subset search.
    costs : mapping of str to float, optional
        Cost per value of the signals that are candidates for the cheapest set: the search runs over
        these (at most 10; each a signal of the table).
    target_auto_rate : float, optional
        The certified automation the cheapest set must reach; without ``costs`` every signal is a
        candidate, at no cost.

    Raises
    ------
    ValueError
        A cost for a signal the table lacks, more than 10 candidates, or a search without certification.
    """
    signals = table_signals(table)
    names = tuple(signals)
    priced = check_costs(costs or {}, names)
    search = costs is not None or target_auto_rate is not None
    candidates = tuple(priced) if costs is not None else names
    if search:
        if certification is None:
            raise ValueError("the cheapest set needs a certification (max_error and delta)")
        if len(candidates) > MOST_SIGNALS:
            raise ValueError(f"the cheapest set is searched over every subset of at most {MOST_SIGNALS} signals, got "
                             f"{len(candidates)} ({', '.join(candidates)}): price fewer signals in the costs")
    error = table.errors()
    units = table.review_units
    parts: list[tuple[str | None, np.ndarray]]
    if by is None:
        parts = [(None, np.ones(len(table), dtype=bool))]
    else:
        codes, part_names = ((table.field_codes, table.field_names) if by == "field"
                             else (table.document_type_codes, table.document_types))
        parts = [(name, codes == code) for code, name in enumerate(part_names) if np.any(codes == code)]
    found = []
    for name, mine in parts:
        columns = signal_columns({key: column[mine] for key, column in signals.items()})
        groups = None if units is None else units[mine]
        analysis = analyse_signals(columns, error[mine], certification=certification, groups=groups, costs=priced)
        subsets = None
        if search and certification is not None:
            subsets = search_subsets({key: columns[key] for key in candidates}, error[mine], certification,
                                     costs=priced, target_auto_rate=target_auto_rate, groups=groups)
        found.append(SignalsPart(name=name, values=int(mine.sum()), errors=int(error[mine].sum()), analysis=analysis,
                                 subsets=subsets))
    return found
