"""Import CORD receipts (clovaai/cord, v1 files and ``naver-clova-ix/cord-v2`` rows) into canonical KIE records.

A CORD receipt is a JSON object with ``gt_parse`` (the ground truth, by
category), ``valid_line`` (the annotated OCR lines: words with quadrilateral
boxes, a ``category`` and a ``group_id``) and ``meta.image_size``. CORD v2
rows hold the same object as a JSON string in their ``ground_truth`` field.

Every top-level category of ``gt_parse`` becomes groups named after it, one
per item: each ``menu`` item is a ``menu`` group, ``sub_total`` and ``total``
are one group each, as in the official KIEval CSV of CORD. Keys are
``<category>.<field>``; a nested item (``sub``) is flattened into its parent
group with ``_`` (``sub.nm`` -> ``menu.sub_nm``, the KIEval ontology); a key
that already has a ``.`` is kept as written; a list gives one entity per value.

CORD has no predictions. Model outputs in the Qwen/KIEval JSON format (one
file per receipt, keys such as ``menu.nm``) can be joined with
``predictions=``; they carry no confidence, so every predicted entity gets 1.0.
See ``docs/importers/cord.md``.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.inputs import check_input, input_lines
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import is_finite_number, load_json, parse_line
from rpa_sim.records.importers.sources import each_source, loses_nothing
from rpa_sim.records.models import (
    Document,
    Entity,
    Extraction,
    Group,
    KIERecord,
    Page,
    PredictedEntity,
    PredictedExtraction,
    PredictedGroup,
    Word,
)

__all__ = ["PREDICTION_CONFIDENCE", "flatten_category", "import_cord", "quad_to_bbox"]

PREDICTION_CONFIDENCE = 1.0
# KIEval's run_eval.py renames this category of model outputs before scoring.
_CATEGORY_ALIASES = {"subtotal": "sub_total"}
_QUAD_KEYS = ("x1", "y1", "x2", "y2", "x3", "y3", "x4", "y4")

Pairs = list[tuple[str, str]]


@dataclass(frozen=True)
class _Where:
    """Where a receipt comes from, to locate errors: a file, and a line and id in a ``.jsonl``."""

    path: str
    line: int | None = None
    record_id: str | None = None
    prefix: str = ""  # "ground_truth." when the receipt is the JSON string of a v2 row

    def error(self, problem: str, field: str | None = None) -> InputError:
        name = f"{self.prefix}{field}" if field else (self.prefix.rstrip(".") or None)
        return InputError(problem, path=self.path, line=self.line, record_id=self.record_id, field=name)


# --------------------------------------------------------------------------- flattening


def _key(parent: str | None, field: str, category: str) -> str:
    if "." in field:  # model outputs name keys in full ("menu.nm", "menu.sub_nm")
        return field
    return f"{category}.{field}" if parent is None else f"{parent}_{field}"


def _flatten(value: Any, key: str, category: str, field: str, out: Pairs) -> int:
    """Append the pairs under ``value`` to ``out``; return how many nulls were left out."""
    if isinstance(value, str):
        out.append((key, value))
        return 0
    if value is None:
        return 1
    if isinstance(value, list):
        return sum(_flatten(item, key, category, f"{field}[{i}]", out) for i, item in enumerate(value))
    if isinstance(value, dict):
        return sum(_flatten(item, _key(key, name, category), category, f"{field}.{name}", out)
                   for name, item in value.items())
    raise InputError(f"expected a string, a list or an object, got {shown(value)}", field=field)


def flatten_category(category: str, value: Any, *, field: str | None = None) -> tuple[list[Pairs], int]:
    """The groups of one top-level category of a CORD parse, as ``(key, value)`` lists.

    Parameters
    ----------
    category : str
        The category (``menu``, ``sub_total``, ...); it prefixes the keys.
    value : dict or list of dict
        One item, or a list of items (one group each).
    field : str, optional
        The JSON path of ``value`` for error messages; ``category`` by default.

    Returns
    -------
    groups : list of list of (str, str)
        One list of pairs per item, in order.
    nulls : int
        How many ``null`` values were left out.

    Raises
    ------
    InputError
        When an item is not an object or a value is not a string, list, object or null.

    Examples
    --------
    >>> groups, nulls = flatten_category("menu", [
    ...     {"nm": "LATTE", "price": ["4,000", "4.000"]},
    ...     {"nm": "TEA", "sub": [{"nm": "+Ice"}, {"nm": "+M", "price": None}]}])
    >>> groups[0]
    [('menu.nm', 'LATTE'), ('menu.price', '4,000'), ('menu.price', '4.000')]
    >>> groups[1], nulls
    ([('menu.nm', 'TEA'), ('menu.sub_nm', '+Ice'), ('menu.sub_nm', '+M')], 1)
    >>> flatten_category("total", {"total.total_price": "9,000"})
    ([[('total.total_price', '9,000')]], 0)
    >>> flatten_category("menu", [{"nm": 2}])
    Traceback (most recent call last):
    rpa_sim.common.errors.InputError: menu[0].nm: expected a string, a list or an object, got 2
    """
    field = category if field is None else field
    items = value if isinstance(value, list) else [value]
    groups: list[Pairs] = []
    nulls = 0
    for i, item in enumerate(items):
        path = f"{field}[{i}]" if isinstance(value, list) else field
        if not isinstance(item, dict):
            raise InputError(f"expected an object or a list of objects, got {shown(item)}", field=path)
        pairs: Pairs = []
        nulls += sum(_flatten(inner, _key(None, name, category), category, f"{path}.{name}", pairs)
                     for name, inner in item.items())
        groups.append(pairs)
    return groups, nulls


def _parse_groups(parse: dict[str, Any], field: str, where: _Where, aliases: dict[str, str],
                  ) -> tuple[list[tuple[str, Pairs]], int]:
    named: list[tuple[str, Pairs]] = []
    nulls = 0
    for category, value in parse.items():
        name = aliases.get(category, category)
        try:
            groups, dropped = flatten_category(name, value, field=f"{field}{category}")
        except InputError as error:
            raise where.error(error.problem, error.location.field) from None
        named += [(name, pairs) for pairs in groups]
        nulls += dropped
    return named, nulls


# --------------------------------------------------------------------------- OCR words


def quad_to_bbox(quad: dict[str, float]) -> tuple[float, float, float, float]:
    """The axis-aligned ``(x0, y0, x1, y1)`` box around a CORD quadrilateral.

    Examples
    --------
    >>> quad_to_bbox({"x1": 56, "y1": 480, "x2": 74, "y2": 482, "x3": 75, "y3": 512, "x4": 55, "y4": 510})
    (55, 480, 75, 512)
    """
    xs = [quad[f"x{i}"] for i in range(1, 5)]
    ys = [quad[f"y{i}"] for i in range(1, 5)]
    return min(xs), min(ys), max(xs), max(ys)


@dataclass(frozen=True)
class _Line:
    category: str
    group_id: int | str
    words: list[Word]
    values: list[str]  # the texts of the words that are not keys (is_key = 0)


# The members every valid_line entry needs: what each must be, and its JSON types.
_LINE_MEMBERS = {"category": ("a string", (str,)), "group_id": ("an integer or a string", (int, str)),
                 "words": ("a list", (list,))}


def _lines(raw: Any, where: _Where) -> list[_Line]:
    if not isinstance(raw, list):
        raise where.error(f"expected a list of lines, got {shown(raw)}", "valid_line")
    lines = []
    for i, line in enumerate(raw):
        field = f"valid_line[{i}]"
        if not isinstance(line, dict):
            raise where.error(f"expected an object, got {shown(line)}", field)
        for name, (kind, types) in _LINE_MEMBERS.items():
            if name not in line:
                raise where.error("missing", f"{field}.{name}")
            if not isinstance(line[name], types) or isinstance(line[name], bool):
                raise where.error(f"expected {kind}, got {shown(line[name])}", f"{field}.{name}")
        words, values = [], []
        for j, word in enumerate(line["words"]):
            wfield = f"{field}.words[{j}]"
            if not isinstance(word, dict):
                raise where.error(f"expected an object, got {shown(word)}", wfield)
            text, quad = word.get("text"), word.get("quad")
            if not isinstance(text, str):
                raise where.error("missing" if text is None else f"expected a string, got {shown(text)}",
                                  f"{wfield}.text")
            if not isinstance(quad, dict) or not all(is_finite_number(quad.get(k)) for k in _QUAD_KEYS):
                raise where.error(f"expected numbers x1..x4 and y1..y4, got {shown(quad)}", f"{wfield}.quad")
            words.append(Word(text=text, bbox=quad_to_bbox(quad), segment=line["group_id"]))
            # Key words are printed labels ("TOTAL"), not part of the value gt_parse holds.
            if not word.get("is_key"):
                values.append(text)
        lines.append(_Line(line["category"], line["group_id"], words, values))
    return lines


def _page_size(meta: Any, where: _Where) -> tuple[float, float]:
    if not isinstance(meta, dict) or "image_size" not in meta:
        raise where.error("missing", "meta.image_size")
    size = meta["image_size"]
    if not isinstance(size, dict):
        raise where.error(f"expected an object with width and height, got {shown(size)}", "meta.image_size")
    for name in ("width", "height"):
        value = size.get(name)
        if not is_finite_number(value) or value <= 0:
            problem = "missing" if value is None else f"expected a positive number, got {shown(value)}"
            raise where.error(problem, f"meta.image_size.{name}")
    return size["width"], size["height"]


# --------------------------------------------------------------------------- cross-check


def _squash(text: str) -> str:
    # gt_parse joins a value's OCR lines with spaces (v1) or lists them (v2), and
    # tokenises some values ("( L )"); without whitespace both sides compare equal.
    return re.sub(r"\s+", "", text)


def _signature(pairs: Pairs) -> tuple[tuple[str, str], ...]:
    joined: dict[str, str] = defaultdict(str)
    for key, value in pairs:
        joined[key] += _squash(value)
    return tuple(sorted(joined.items()))


def _cross_check(groups: list[tuple[str, Pairs]], lines: list[_Line], report: ImportReport) -> None:
    """Count the groups on which gt_parse and valid_line (category + group_id) disagree."""
    rebuilt: dict[tuple[str, int | str], Pairs] = {}
    for line in lines:
        text = "".join(line.values)
        if text:
            top = line.category.split(".", 1)[0]
            rebuilt.setdefault((top, line.group_id), []).append((line.category, text))
    parsed = Counter((name, _signature(pairs)) for name, pairs in groups)
    found = Counter((top, _signature(pairs)) for (top, _), pairs in rebuilt.items())
    for (name, _), n in (parsed - found).items():
        report.unmapped[f"{name} groups of gt_parse that valid_line does not reconstruct (kept)"] += n
    for (name, _), n in (found - parsed).items():
        report.unmapped[f"{name} groups of valid_line absent from gt_parse (not imported)"] += n


# --------------------------------------------------------------------------- receipts


@dataclass(frozen=True)
class _Receipt:
    """A receipt to read: a file (``data`` None until read), or a row of a ``.jsonl`` and its data, or why that
    row cannot be read."""

    id: str
    data: Any
    where: _Where
    error: InputError | None = None

    def __str__(self) -> str:
        return self.where.path


def _rows(path: Path) -> Iterator[_Receipt]:
    """The receipts of a ``.jsonl`` file (:func:`rpa_sim.common.inputs.input_lines`: plain or gzip, bounded lines);
    a row that is not JSON is a receipt with its error, a file that cannot be read raises."""
    for index, (number, raw) in enumerate(input_lines(path)):
        record_id = str(index)
        where = _Where(str(path), number, record_id)
        try:
            yield _Receipt(record_id, parse_line(raw, path=path, line=number, record_id=record_id), where)
        except InputError as error:
            yield _Receipt(record_id, None, where, error)


def _receipts(source: Path) -> Iterator[_Receipt]:
    if source.is_dir():
        files = sorted(source.glob("*.json"))
        if not files:
            raise InputError("no .json files", path=str(source))
        return (_Receipt(path.stem, None, _Where(str(path))) for path in files)
    if not source.exists():
        raise InputError("no such file or folder", path=str(source))
    check_input(source)
    if source.suffix == ".jsonl":
        return _rows(source)
    if source.suffix == ".json":
        return iter([_Receipt(source.stem, None, _Where(str(source)))])
    raise InputError("expected a folder of .json files, a .json file or a .jsonl file of CORD v2 rows",
                     path=str(source))


def _unwrap(receipt: _Receipt) -> tuple[dict[str, Any], _Where]:
    """The CORD object of a receipt: the file itself, or the ``ground_truth`` of a v2 row."""
    where = receipt.where
    data = load_json(Path(where.path)) if receipt.data is None else receipt.data
    if not isinstance(data, dict):
        raise where.error(f"expected a JSON object, got {shown(data)}")
    if "gt_parse" not in data and "ground_truth" in data:
        inner, where = data["ground_truth"], _Where(where.path, where.line, where.record_id, "ground_truth.")
        if isinstance(inner, str):
            try:
                inner = json.loads(inner)
            except json.JSONDecodeError as error:
                raise where.error(f"invalid JSON in the string: {error.msg} at character {error.pos + 1}") from None
            except RecursionError:
                raise where.error("invalid JSON in the string: nested too deeply") from None
        if not isinstance(inner, dict):
            raise where.error(f"expected a JSON object or its string, got {shown(inner)}")
        data = inner
    return data, where


def _ground_truth(receipt: _Receipt, report: ImportReport) -> KIERecord:
    data, where = _unwrap(receipt)
    if "gt_parse" not in data:
        raise where.error("missing", "gt_parse")
    parse = data["gt_parse"]
    if not isinstance(parse, dict):
        raise where.error(f"expected an object of categories, got {shown(parse)}", "gt_parse")
    groups, nulls = _parse_groups(parse, "gt_parse.", where, {})
    if nulls:
        report.unmapped["null values in gt_parse"] += nulls
    width, height = _page_size(data.get("meta"), where)
    if "valid_line" not in data:
        raise where.error("missing", "valid_line")
    lines = _lines(data["valid_line"], where)
    _cross_check(groups, lines, report)
    page = Page(width=width, height=height, words=[word for line in lines for word in line.words])
    return KIERecord(
        id=receipt.id,
        ground_truth=Extraction(groups=[Group(name=name, entities=[Entity(key=k, value=v) for k, v in pairs])
                                        for name, pairs in groups]),
        document=Document(pages=[page]),
    )


# --------------------------------------------------------------------------- predictions


class _ModelOutputs:
    """A folder of model outputs, one ``.json`` per receipt, found by stem or by number."""

    def __init__(self, folder: Path) -> None:
        if not folder.is_dir():
            raise InputError("expected a folder of model-output .json files", path=str(folder))
        self.folder = folder
        self.files = {path.stem: path for path in sorted(folder.glob("*.json"))}
        if not self.files:
            raise InputError("no .json files", path=str(folder))
        self.by_number: dict[int, Path] = {}
        for stem, path in self.files.items():
            if stem.isdecimal():
                other = self.by_number.setdefault(int(stem), path)
                if other is not path:
                    raise InputError(f"{other.name} and {path.name} are the same receipt number",
                                     path=str(folder))
        self.used: set[Path] = set()
        self.missing: list[str] = []

    def find(self, record_id: str) -> Path | None:
        path = self.files.get(record_id)
        if path is None and record_id.isdecimal():
            # KIEval names outputs by dataset index, zero-padded: 000.json is row 0.
            path = self.by_number.get(int(record_id))
        if path is None:
            self.missing.append(record_id)
        else:
            self.used.add(path)
        return path

    def prediction(self, path: Path, report: ImportReport) -> PredictedExtraction:
        data = load_json(path)
        where = _Where(str(path))
        if not isinstance(data, dict):
            raise where.error(f"expected a JSON object of categories, got {shown(data)}")
        groups, nulls = _parse_groups(data, "", where, _CATEGORY_ALIASES)
        if nulls:
            report.unmapped["null values in model outputs"] += nulls
        return PredictedExtraction(groups=[
            PredictedGroup(name=name, entities=[PredictedEntity(key=k, value=v, confidence=PREDICTION_CONFIDENCE)
                                                for k, v in pairs])
            for name, pairs in groups])

    def finish(self, report: ImportReport) -> None:
        orphans = len(self.files) - len(self.used)
        if orphans:
            report.unmapped[f"model-output files without a receipt of the same id in {self.folder}"] += orphans
        if self.missing:
            shown = ", ".join(self.missing[:10]) + (" ..." if len(self.missing) > 10 else "")
            report.notes.append(f"{len(self.missing)} receipts have no model-output file "
                                f"(scored as predicting nothing): {shown}")


# --------------------------------------------------------------------------- entry point


def _records(receipts: Iterator[_Receipt], outputs: _ModelOutputs | None, report: ImportReport, *,
             skip_invalid: bool) -> Iterator[KIERecord]:
    def read(receipt: _Receipt) -> Iterator[KIERecord]:
        if receipt.error is not None:
            raise receipt.error
        record = _ground_truth(receipt, report)
        if outputs is not None:
            path = outputs.find(record.id)
            prediction = PredictedExtraction() if path is None else outputs.prediction(path, report)
            record = record.model_copy(update={"prediction": prediction})
        yield record

    # what the report counts loses no value: nulls are values not given, and a group that gt_parse and valid_line
    # disagree on is the ground truth's as gt_parse writes it
    for record in each_source(receipts, read, report=report, skip_invalid=skip_invalid, not_lost=loses_nothing):
        report.records += 1
        yield record
    if outputs is not None:
        outputs.finish(report)


def import_cord(source: str | Path, *, predictions: str | Path | None = None, skip_invalid: bool = False,
                ) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read CORD receipts into KIE records with ground truth and OCR words.

    Parameters
    ----------
    source : path-like
        A folder of CORD ``.json`` files (ids: the file stems, in name order),
        one ``.json`` file, or a ``.jsonl`` of CORD v2 rows whose
        ``ground_truth`` holds the receipt (ids: the 0-based row number).
    predictions : path-like, optional
        A folder of model outputs in the Qwen/KIEval JSON format. A file
        belongs to the receipt whose id is its stem, or, for numbers, whose id
        is the same number (``007.json`` is row 7). A receipt without a file
        gets an empty prediction; files without a receipt are counted in
        the report. Predicted entities get confidence 1.0.
    skip_invalid : bool, default=False
        Leave out (and list) a receipt with a problem, in its file, its row or
        its model output, rather than stop
        (:func:`~rpa_sim.records.importers.sources.each_source`).

    Returns
    -------
    records : iterator of KIERecord
        Lazy, in source order; each has ``ground_truth`` and ``document``
        (one page), and ``prediction`` only when ``predictions`` is given.
    report : ImportReport
        Filled in as the records are consumed: counts of gt_parse groups that
        ``valid_line`` does not reconstruct, of null values, of unmatched
        model outputs.

    Raises
    ------
    InputError
        For a missing or unreadable source here, and for malformed receipts
        (file, line, id and JSON field path, quoting the bad value) while iterating.
    """
    receipts = _receipts(Path(source))
    outputs = None if predictions is None else _ModelOutputs(Path(predictions))
    report = ImportReport("cord")
    if outputs is None:
        report.notes.append("CORD has ground truth only: the records have no prediction; join predictions "
                            "with `rpa-sim score GT --predictions PRED`, or import model outputs with --predictions")
    else:
        report.notes.append("the model outputs have no confidences; every prediction has confidence 1.0")
    return _records(receipts, outputs, report, skip_invalid=skip_invalid), report
