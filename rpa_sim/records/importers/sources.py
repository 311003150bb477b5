"""Reading an import's sources one at a time by the rules every importer of outputs shares.

:func:`each_source` reads the files (or documents, tasks, records) of a
``SRC`` in turn (``docs/importers/service.md``):

- a document whose output holds values none of which could be mapped is an
  error naming why, never an empty record that would read as "the service
  found nothing";
- ``--skip-invalid`` leaves out a source or document with a problem, and
  lists it, as the records reader leaves out a bad record;
- ``--join-lines`` writes each line break in a value as a space
  (:func:`join_lines`), and the report counts the values that hold one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import TypeVar

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.models import Entity, Extraction, KIERecord, PredictedEntity, PredictedExtraction, VQARecord

__all__ = ["StopImport", "each_source", "join_lines", "loses_nothing"]

#: What an importer reads one at a time: a file, a folder of shards, a task.
Source = TypeVar("Source")
#: What it makes of them.
Record = TypeVar("Record", KIERecord, VQARecord)
# a line break: \r\n as one, and every other character that str.splitlines breaks at
_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


class StopImport(InputError):
    """A problem of the whole import, not of one source or record: ``--skip-invalid`` does not skip it (a mapping
    path that matches nothing in the first record would have every record read wrong)."""


def loses_nothing(reason: str) -> bool:
    """``not_lost`` of an importer none of whose reasons loses a value: a dataset's, whose nulls give none and
    whose other counts are of its ground truth, or of what is not a value."""
    return True


def each_source(sources: Iterable[Source], read: Callable[[Source], Iterable[Record]], *, report: ImportReport,
                skip_invalid: bool = False, join_lines: bool = False,
                not_lost: Collection[str] | Callable[[str], bool] = (),
                truth_lost: Callable[[str], bool] | None = None) -> Iterator[Record]:
    """The records ``read`` makes of each source (a file, a folder of shards, a task) in turn, by the rules every
    importer of outputs shares.

    - A record with no entity and no group, made while ``read`` counted a
      reason in ``report.unmapped`` (the service's values were there but could
      not be mapped), is an :class:`InputError` naming the source, the record
      and the reasons, never an empty record. Reasons in ``not_lost`` lose no
      value: the service gave none (Mindee's "not found"), or what they drop
      repeats other values; an empty record made with those alone is what the
      service found, and is written. The same holds for a ground truth that
      ``read`` takes from the same output (Label Studio's annotations, a
      mapping's ``ground_truth`` section): the reasons ``truth_lost`` tells
      lose its values, and leave it empty only with an error. (A VQA record
      has one answer a side: nothing of it can be lost so.)
    - With ``skip_invalid``, a source with a problem is left out whole (none
      of its records are written), and such an empty record alone; each is in
      ``report.skipped``, and its counts are taken back out of
      ``report.unmapped``. If nothing is left, that is an error. A
      :class:`StopImport` is raised even so.
    - With ``join_lines``, each line break in a value is a space
      (:func:`join_lines`): in the prediction, and in a ground truth read from
      the same output (a ground truth joined later, ``--ground-truth``, is read
      as it is); either way the report counts the values that hold one.

    Parameters
    ----------
    sources : iterable
        What ``read`` reads, in order; ``str(source)`` names it in messages,
        and its ``line`` attribute, when it has one, the line.
    read : callable
        The records of one source, lazily; raises :class:`InputError` for a bad one.
    report : ImportReport
        The import's report.
    skip_invalid : bool, default=False
        Leave out bad sources and records rather than stop.
    join_lines : bool, default=False
        Write the line breaks in values as spaces.
    not_lost : collection of str, or callable, default=()
        Reasons of ``report.unmapped`` that lose no value, or whether a reason loses none.
    truth_lost : callable, optional
        Whether a reason (not in ``not_lost``) loses a ground-truth value rather than a predicted one; by
        default every reason is the prediction's.

    Examples
    --------
    >>> from rpa_sim.records.models import PredictedEntity, PredictedExtraction
    >>> def read(name):
    ...     if name == "empty.json":
    ...         report.unmapped["entities without a value"] += 2
    ...         return [KIERecord(id="empty", prediction=PredictedExtraction())]
    ...     return [KIERecord(id=name, prediction=PredictedExtraction(entities=[
    ...         PredictedEntity(key="address", value="1 Main St\\nTown", confidence=0.9)]))]
    >>> report = ImportReport("example")
    >>> records = each_source(["a.json", "empty.json"], read, report=report, skip_invalid=True, join_lines=True)
    >>> [(r.id, r.prediction.entities[0].value) for r in records]
    [('a.json', '1 Main St Town')]
    >>> print("\\n".join(report.lines()))  # doctest: +NORMALIZE_WHITESPACE
    note: values with line breaks, each break written as a space (--join-lines): 1
    skipped (--skip-invalid): 1, each with its problem:
      empty.json: id empty: none of its values could be mapped (2 entities without a value): an empty record
      would read as a document where the service found nothing
    """
    lines = _LineBreaks(join=join_lines)
    rule = _NothingLost(not_lost if callable(not_lost) else not_lost.__contains__, truth_lost)
    written = 0
    for source in sources:
        before = report.unmapped.copy()
        kept: list[Record] = []
        try:
            for record in _mapped(source, read, report, rule, skip_invalid):
                record = lines.read(record)
                if skip_invalid:
                    kept.append(record)
                else:
                    written += 1
                    yield record
        except StopImport:
            raise
        except InputError as error:
            if not skip_invalid:
                raise
            _restore(report.unmapped, before)
            report.skipped.append(error)
            continue
        written += len(kept)
        yield from kept
    if report.skipped and not written:
        raise InputError(f"nothing to import: every file or document has a problem ({len(report.skipped)} "
                         f"skipped; the first: {report.skipped[0]})")
    lines.finish(report)


class _NothingLost:
    """The rule: a side of a record left empty by reasons that lose values is an error, never an empty side."""

    def __init__(self, not_lost: Callable[[str], bool], truth_lost: Callable[[str], bool] | None) -> None:
        self.not_lost, self.truth_lost = not_lost, truth_lost

    def problem(self, record: KIERecord | VQARecord, counted: Counter[str]) -> str | None:
        """What is wrong with ``record``, made while ``counted`` was counted; None when nothing is."""
        if isinstance(record, VQARecord):
            return None
        lost = {reason: count for reason, count in counted.items() if not self.not_lost(reason)}
        truth = {reason: count for reason, count in lost.items()
                 if self.truth_lost is not None and self.truth_lost(reason)}
        predicted = {reason: count for reason, count in lost.items() if reason not in truth}
        if predicted and _is_empty(record.prediction):
            return (f"none of its values could be mapped ({_reasons(predicted)}): an empty record would read as a "
                    f"document where the service found nothing")
        if truth and record.ground_truth is not None and _is_empty(record.ground_truth):
            return (f"none of its ground-truth values could be mapped ({_reasons(truth)}): an empty ground truth "
                    f"would score every predicted value as an addition")
        return None


def _is_empty(side: Extraction | PredictedExtraction | None) -> bool:
    return side is None or not (side.entities or side.groups)


def _reasons(counts: dict[str, int]) -> str:
    return "; ".join(f"{count} {reason}" for reason, count in sorted(counts.items()))


def _mapped(source: Source, read: Callable[[Source], Iterable[Record]], report: ImportReport,
            rule: _NothingLost, skip_invalid: bool) -> Iterator[Record]:
    """The records of ``source`` as they come, but a record left empty by values that could not be mapped is an
    error (what ``read`` counted while it made the record tells)."""
    before = report.unmapped.copy()
    iterator = iter(read(source))
    while (record := next(iterator, None)) is not None:
        problem = rule.problem(record, report.unmapped - before)
        if problem is None:
            yield record
        else:
            error = InputError(problem, path=str(source), line=getattr(source, "line", None), record_id=record.id)
            if not skip_invalid:
                raise error
            _restore(report.unmapped, before)
            report.skipped.append(error)
        before = report.unmapped.copy()


def _restore(counts: Counter[str], before: Counter[str]) -> None:
    """Put ``counts`` back as ``before`` in place (importers hold the same Counter)."""
    counts.clear()
    counts.update(before)


def join_lines(value: str) -> str:
    r"""``value`` with each line break a space: ``\n``, ``\r\n`` (one break), ``\r`` and the others of
    :meth:`str.splitlines` (``\u2028``...).

    Examples
    --------
    >>> join_lines("222 Main Street\nAnytown, USA"), join_lines("a\r\nb\rc\u2028d")
    ('222 Main Street Anytown, USA', 'a b c d')
    """
    return _LINE_BREAK.sub(" ", value)


class _LineBreaks:
    """Counts the values with a line break and, to join them, writes each break as a space."""

    def __init__(self, *, join: bool) -> None:
        self.join, self.values = join, 0

    def read(self, record: Record) -> Record:
        # answers: no importer of them offers --join-lines
        return record if isinstance(record, VQARecord) else self.kie(record)

    def kie(self, record: KIERecord) -> KIERecord:
        sides: dict[str, Extraction | PredictedExtraction] = {
            name: side for name, side in (("prediction", record.prediction), ("ground_truth", record.ground_truth))
            if side is not None}
        if not self.join:
            for extraction in sides.values():
                entities = [*extraction.entities, *(e for group in extraction.groups for e in group.entities)]
                self.values += sum(_LINE_BREAK.search(entity.value) is not None for entity in entities)
            return record
        return record.model_copy(update={name: self.side(side) for name, side in sides.items()})

    def side(self, side: Extraction | PredictedExtraction) -> Extraction | PredictedExtraction:
        groups = [group.model_copy(update={"entities": [self.entity(entity) for entity in group.entities]})
                  for group in side.groups]
        return side.model_copy(update={"entities": [self.entity(entity) for entity in side.entities],
                                       "groups": groups})

    def entity(self, entity: Entity | PredictedEntity) -> Entity | PredictedEntity:
        if _LINE_BREAK.search(entity.value) is None:
            return entity
        self.values += 1
        return entity.model_copy(update={"value": join_lines(entity.value)})

    def finish(self, report: ImportReport) -> None:
        if not self.values:
            return
        report.notes.append(f"values with line breaks, each break written as a space (--join-lines): {self.values}"
                            if self.join else
                            f"values with line breaks, kept as the service wrote them (--join-lines writes each "
                            f"break as a space, as a ground truth typed on one line has it): {self.values}")
