"""Import the official KIEval CSV block format (UpstageAI/KIEval) into canonical KIE records.

A CSV file is a sequence of blocks separated by a blank line. A block whose
first character is a digit is a group block: its index, a TAB-separated line of
keys, then one TAB-separated line of values per group. Any other block is a
non-group block: a header line (discarded, as the official reader does) and
``key<TAB>value`` lines. ``<empty>`` marks an absent value and ``||`` joins
several values of one key.

Each group block index becomes the category (group ``name``) of its groups, so
that groups are paired within a block, as the official code does. The format
carries no confidences: predictions get confidence 1.0.

A non-group block's first line is discarded as the official reader discards
it; when it holds a TAB it reads as ``key<TAB>value`` (a file written without
the header line), and is counted: a side all of whose values were such lines
is an error rather than an empty side
(:func:`~rpa_sim.records.importers.sources.each_source`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from rpa_sim.common.errors import InputError
from rpa_sim.common.formatting import counted
from rpa_sim.common.inputs import read_input
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers.sources import each_source
from rpa_sim.records.models import (
    Entity,
    Extraction,
    Group,
    KIERecord,
    PredictedEntity,
    PredictedExtraction,
    PredictedGroup,
)

__all__ = ["EMPTY_TOKEN", "VALUE_DELIMITER", "ParsedBlocks", "parse_kieval_csv", "record_from_blocks",
           "import_kieval_csv"]

EMPTY_TOKEN = "<empty>"
VALUE_DELIMITER = "||"
PREDICTION_CONFIDENCE = 1.0
# what the report counts: keys left out by the shortlist (asked for), and first lines of data (lost), by side
_SHORTLIST = "values whose keys are not in the shortlist"
_TAB_HEADERS = {side: f"{'predicted' if side else 'ground-truth'} non-group blocks whose first line, discarded as the "
                      f"official reader discards it, holds a key<TAB>value (a file written without the header line?)"
                for side in (True, False)}


@dataclass(frozen=True)
class ParsedBlocks:
    """The entities of one CSV file: non-grouped ``(key, value)`` pairs and ``(block, pairs)`` groups."""

    entities: list[tuple[str, str]]
    groups: list[tuple[str, list[tuple[str, str]]]]
    dropped_keys: int
    #: the header lines of non-group blocks that hold a TAB, discarded as every header is
    tab_headers: int = 0


def _values(cell: str, split: bool) -> list[str]:
    return [v for v in (cell.split(VALUE_DELIMITER) if split else [cell]) if v != EMPTY_TOKEN]


def parse_kieval_csv(text: str, *, shortlist: Collection[str] | None = None, split_values: bool = True,
                     path: str | None = None) -> ParsedBlocks:
    """Parse the text of one KIEval CSV file.

    Parameters
    ----------
    text : str
        The file's content.
    shortlist : collection of str, optional
        Keys to keep (the official ``shortlist``); ``None`` keeps every key.
    split_values : bool, default=True
        Split ``||``-joined cells into several values (the official ``split_merged_value``).
    path : str, optional
        The file's name, for error messages.

    Examples
    --------
    >>> blocks = parse_kieval_csv("0\\nmenu.nm\\tmenu.price\\nLatte\\t4.00\\nTea\\t<empty>\\n\\n"
    ...                           "#header\\ndate\\ta||b\\n")
    >>> blocks.groups
    [('0', [('menu.nm', 'Latte'), ('menu.price', '4.00')]), ('0', [('menu.nm', 'Tea')])]
    >>> blocks.entities
    [('date', 'a'), ('date', 'b')]
    """
    entities: list[tuple[str, str]] = []
    groups: list[tuple[str, list[tuple[str, str]]]] = []
    dropped = tab_headers = 0
    line_number = 1
    for block in text.split("\n\n"):
        lines = block.split("\n")
        if block and block[0].isdigit():
            index = lines[0].strip()
            if len(lines) < 2:
                raise InputError(f"group block {index!r} has no line of keys", path=path, line=line_number)
            keys = lines[1].split("\t")
            for offset, row in enumerate(lines[2:], start=2):
                if row == "":
                    continue
                cells = row.split("\t")
                if len(cells) != len(keys):
                    raise InputError(f"group block {index!r} has {len(keys)} keys but {len(cells)} values",
                                     path=path, line=line_number + offset)
                kept = [(k, c) for k, c in zip(keys, cells) if shortlist is None or k in shortlist]
                dropped += len(keys) - len(kept)
                # A row of only <empty> values is still a group, as in the official reader:
                # it takes part in group pairing and group-level counts.
                if kept:
                    groups.append((index, [(k, v) for k, c in kept for v in _values(c, split_values)]))
        elif block:
            tab_headers += "\t" in lines[0]
            for offset, row in enumerate(lines[1:], start=1):
                if row == "":
                    continue
                key, sep, cell = row.partition("\t")
                if not sep:
                    raise InputError(f"expected key<TAB>value, got {row!r}", path=path, line=line_number + offset)
                if shortlist is not None and key not in shortlist:
                    dropped += 1
                    continue
                entities.extend((key, v) for v in _values(cell, split_values))
        line_number += len(lines) + 1
    return ParsedBlocks(entities, groups, dropped, tab_headers)


def _read(path: Path, shortlist: Collection[str] | None) -> ParsedBlocks:
    try:
        text = read_input(path).decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 (byte {error.start})", path=str(path)) from None
    # Windows and old Mac line ends, as reading in text mode turned them into "\n"
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return parse_kieval_csv(text, shortlist=shortlist, path=str(path))


def import_kieval_csv(source: str | Path, *, shortlist: Collection[str] | None = None,
                      skip_invalid: bool = False) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read ``SRC/gt/*.csv`` and ``SRC/pred/*.csv`` into KIE records, joined on the file stem.

    Predictions get confidence 1.0 (the format has none). A ground-truth file
    without a prediction file is a document with an empty prediction, as the
    official code treats it; a prediction file without ground truth is an
    error (at the call), and so is a file that does not parse (as the records
    are read). With ``skip_invalid``, either leaves its document out, listed
    (:func:`~rpa_sim.records.importers.sources.each_source`).

    Returns the records (sorted by id, numerically where ids are numbers), lazily, and a report complete once they
    are consumed.
    """
    source = Path(source)
    if source.exists() and not source.is_dir():  # a file, a pipe or a device: never opened
        raise InputError("expected a folder holding gt/ and pred/ folders of CSV files", path=str(source))
    gt_dir, pred_dir = source / "gt", source / "pred"
    for folder in (gt_dir, pred_dir):
        if not folder.is_dir():
            other = "pred" if folder is gt_dir else "gt"
            raise InputError(f"expected a folder {folder.name}/ of CSV files beside {other}/", path=str(folder))
    gt_files = {p.stem: p for p in gt_dir.glob("*.csv")}
    pred_files = {p.stem: p for p in pred_dir.glob("*.csv")}
    if not gt_files:
        raise InputError("no .csv files", path=str(gt_dir))
    orphans = sorted(set(pred_files) - set(gt_files))
    if orphans and not skip_invalid:
        raise InputError(f"prediction without ground truth: {orphans[0]}.csv"
                         + (f" (and {len(orphans) - 1} more)" if len(orphans) > 1 else ""), path=str(pred_dir))
    report = ImportReport("kieval-csv")
    report.notes.append("the KIEval CSV format has no confidences; every prediction has confidence 1.0")

    def read(document: _Document) -> Iterator[KIERecord]:
        if document.gt is None:
            raise InputError("a prediction without ground truth (no file of this name in gt/)", path=str(document))
        gt = _read(document.gt, shortlist)
        pred = _read(document.pred, shortlist) if document.pred is not None else ParsedBlocks([], [], 0)
        for reason, count in ((_SHORTLIST, gt.dropped_keys + pred.dropped_keys),
                              (_TAB_HEADERS[False], gt.tab_headers), (_TAB_HEADERS[True], pred.tab_headers)):
            if count:
                report.unmapped[reason] += count
        yield record_from_blocks(document.stem, gt, pred)

    stems = sorted(set(gt_files) | set(pred_files), key=_file_order)
    documents = [_Document(stem, gt_files.get(stem), pred_files.get(stem)) for stem in stems]
    records = each_source(documents, read, report=report, skip_invalid=skip_invalid, not_lost={_SHORTLIST},
                          truth_lost=_TAB_HEADERS[False].__eq__)
    return _counted(records, report, missing=set(gt_files) - set(pred_files)), report


@dataclass(frozen=True)
class _Document:
    """A document's files: its ground truth and its prediction, each None when missing; named by the prediction's
    file in messages (the ground truth's when it has none)."""

    stem: str
    gt: Path | None
    pred: Path | None

    def __str__(self) -> str:
        return str(self.pred or self.gt)


def _counted(records: Iterator[KIERecord], report: ImportReport, *, missing: set[str]) -> Iterator[KIERecord]:
    """``records`` counted in ``report`` as they are written; the documents without a prediction file in a note."""
    without: list[str] = []
    for record in records:
        report.records += 1
        if record.id in missing:
            without.append(record.id)
        yield record
    if without:
        missed = counted(len(without), "document has", "documents have")
        report.notes.append(f"{missed} no prediction file (scored as predicting nothing): "
                            + ", ".join(without[:10]) + (" ..." if len(without) > 10 else ""))


def _file_order(stem: str) -> tuple[bool, int, str, str]:
    """Numbered files in numeric order (``2.csv`` before ``10.csv``), then the others by name.

    Numbers are compared as text of their length, never converted: a stem of digits beyond ASCII (``²``)
    or of thousands of them reads as digits to ``str.isdigit`` and breaks ``int``.

    >>> sorted(["10", "b", "2", "007", "²", "a"], key=_file_order)
    ['2', '007', '10', 'a', 'b', '²']
    """
    numbered = stem.isascii() and stem.isdigit()
    digits = stem.lstrip("0") if numbered else ""
    return not numbered, len(digits), digits, stem


def record_from_blocks(stem: str, gt: ParsedBlocks, pred: ParsedBlocks) -> KIERecord:
    """One canonical KIE record from the parsed ground-truth and prediction files of a document."""
    return KIERecord(
        id=stem,
        ground_truth=Extraction(
            entities=[Entity(key=k, value=v) for k, v in gt.entities],
            groups=[Group(name=name, entities=[Entity(key=k, value=v) for k, v in pairs]) for name, pairs in gt.groups],
        ),
        prediction=PredictedExtraction(
            entities=[PredictedEntity(key=k, value=v, confidence=PREDICTION_CONFIDENCE) for k, v in pred.entities],
            groups=[PredictedGroup(name=name,
                                   entities=[PredictedEntity(key=k, value=v, confidence=PREDICTION_CONFIDENCE)
                                             for k, v in pairs])
                    for name, pairs in pred.groups],
        ),
    )
