"""Import DUDE (Document Understanding Dataset and Evaluation) ground truth and submissions as VQA records.

The ground-truth file is ``{"dataset_name": ..., "data": [question, ...]}``,
each question with ``questionId``, ``question``, ``answers``,
``answers_variants``, ``answer_type``, ``answers_page_bounding_boxes`` and
``docId``. A submission is a list of ``{"questionId", "answers",
"answers_confidence"}``. The official evaluator is Jordy-VL/DUDEeval
(``evaluate_submission.py``); where this importer follows or departs from it,
``docs/importers/dude.md`` says so.

Mapping (one VQA record per question):

- id: ``questionId``; ``question``; ``question_type``: ``answer_type``, with
  the demo's ``not answerable`` written as the evaluator's ``not-answerable``.
- answers: ``answers`` then ``answers_variants`` (both accepted; the official
  evaluator reads ``answers`` only: ``variants=False`` reproduces it); an
  empty list for a not-answerable question is ``[""]``.
- list questions (``answer_type`` holding ``list``, as the evaluator tests):
  the items, sorted, joined with :data:`LIST_SEPARATOR` into one string on
  both sides (:func:`join_list`), an approximation of DUDE's Hungarian NLSL.
- evidence: every box of ``answers_page_bounding_boxes``, ``{left, top,
  width, height, page}`` in page pixels with a 0-based page, as
  ``[left, top, left + width, top + height]`` (:func:`evidence_box`).
- prediction: the submission's first answer (as the evaluator does for a
  non-list question), confidence ``answers_confidence[0]`` (1.0, counted,
  when the submission gives none); a question the submission leaves out has
  no prediction (counted); an id the ground truth lacks is an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import FieldChecks, load_json, show
from rpa_sim.records.importers.sources import each_source
from rpa_sim.records.models import Evidence, VQAPrediction, VQARecord

__all__ = ["FORMAT", "LIST_SEPARATOR", "MISSING_CONFIDENCE", "NOT_ANSWERABLE", "evidence_box", "join_list",
           "question_type", "import_dude"]

FORMAT = "dude"
LIST_SEPARATOR = " | "
NOT_ANSWERABLE = "not-answerable"
# The demo ground truth spells the type with a space, the evaluator's type keys
# (and its special case for empty answers) with a hyphen.
_NOT_ANSWERABLE_SPELLINGS = frozenset({NOT_ANSWERABLE, "not answerable"})
# Confidence given when a submission has none: rpa-sim needs one per prediction.
MISSING_CONFIDENCE = 1.0


def question_type(answer_type: str) -> str:
    """The ``question_type`` of an ``answer_type``: as given, but ``not answerable`` -> ``not-answerable``.

    Examples
    --------
    >>> question_type("not answerable"), question_type("list/extractive")
    ('not-answerable', 'list/extractive')
    """
    return NOT_ANSWERABLE if answer_type in _NOT_ANSWERABLE_SPELLINGS else answer_type


def _is_list(answer_type: str) -> bool:
    # The evaluator's own test: ``if "list" in gtObject["answer_type"]``.
    return "list" in answer_type


def join_list(items: list[str]) -> str:
    """A list answer as one string: items sorted (case- and spacing-blind, then as written), joined with `` | ``.

    Sorting makes the string independent of the order in which a list is
    given, as DUDE's Hungarian matching of list items is.

    Examples
    --------
    >>> join_list(["AF1044", "af0055"])
    'af0055 | AF1044'
    """
    return LIST_SEPARATOR.join(sorted(items, key=lambda item: (" ".join(item.lower().split()), item)))


def evidence_box(box: Mapping[str, float]) -> tuple[float, float, float, float]:
    """A DUDE box ``{left, top, width, height}`` (page pixels) as ``[x0, y0, x1, y1]``.

    Examples
    --------
    >>> evidence_box({"left": 185, "top": 70, "width": 299, "height": 74, "page": 0})
    (185, 70, 484, 144)
    """
    return box["left"], box["top"], box["left"] + box["width"], box["top"] + box["height"]


def import_dude(source: str | Path, *, predictions: str | Path | None = None, variants: bool = True,
                skip_invalid: bool = False) -> tuple[Iterator[VQARecord], ImportReport]:
    """Read a DUDE ground-truth file, and optionally a submission, into VQA records.

    Parameters
    ----------
    source : path-like
        The ground-truth JSON (``{"data": [...]}``).
    predictions : path-like, optional
        A submission (a list of ``{"questionId", "answers", "answers_confidence"}``).
        Without it the records hold the ground truth only.
    variants : bool, default=True
        Accept ``answers_variants`` besides ``answers``. The official evaluator
        ignores them; ``False`` scores exactly as it does.
    skip_invalid : bool, default=False
        Leave out (and list) a question or a submission's answer with a
        problem rather than stop
        (:func:`~rpa_sim.records.importers.sources.each_source`); a question
        whose answer is left out has no prediction, counted.

    Returns
    -------
    records : iterator of VQARecord
        One per question, in the ground truth's order, lazily.
    report : ImportReport
        ``records`` and ``unmapped`` grow as the records are produced; the
        notes that carry counts are added when the iterator is exhausted.

    Raises
    ------
    InputError
        At the call for a file that is not JSON or not of DUDE's shape, a
        submission answer whose ``questionId`` is not in the ground truth or
        repeats (without ``skip_invalid``); while iterating for a bad question
        or answer, with the file and the field path.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "gt.json").write_text(json.dumps({"data": [{"questionId": "q1", "question": "Year?",
    ...     "answers": ["1894"], "answers_variants": [], "answer_type": "extractive",
    ...     "answers_page_bounding_boxes": [[{"left": 10, "top": 20, "width": 30, "height": 5, "page": 0}]]}]}))
    >>> _ = (folder / "sub.json").write_text(json.dumps([{"questionId": "q1", "answers": ["1884"],
    ...     "answers_confidence": [0.6]}]))
    >>> records, report = import_dude(folder / "gt.json", predictions=folder / "sub.json")
    >>> record = next(records)
    >>> record.answers, record.prediction.answer, record.prediction.confidence, record.evidence[0].bbox
    (['1894'], '1884', 0.6, (10.0, 20.0, 40.0, 25.0))
    """
    truth_path = str(source)
    questions = _questions(truth_path, load_json(Path(source)))
    report = ImportReport(FORMAT)
    submission: dict[str, tuple[int, dict[str, Any]]] | None = None
    if predictions is None:
        report.notes.append("ground truth only: give a DUDE submission with --predictions to add the predicted "
                            "answers and their confidences")
    else:
        submission = _submission(str(predictions), load_json(Path(predictions)), questions, truth_path,
                                 skipped=report.skipped if skip_invalid else None)
        report.notes.append("confidence = answers_confidence[0]; a question's prediction is the submission's "
                            "first answer, or all its items for a list question")
    report.notes.append("DUDE's ground truth has no OCR: no document is written, so SMuDGE grounding stays "
                        "unknown; docId is not kept (the question id begins with it)")
    records = _Questions(truth_path, submission, str(predictions), variants, report)
    return records.read_all(questions, skip_invalid=skip_invalid), report


def _questions(path: str, data: Any) -> list[Any]:
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        found = f"an object with keys {sorted(data)}" if isinstance(data, dict) else show(data)
        raise InputError(f"expected a DUDE ground truth, an object with a 'data' list; got {found}", path=path)
    return data["data"]


def _submission(path: str, data: Any, questions: list[Any], truth_path: str,
                skipped: list[InputError] | None = None) -> dict[str, tuple[int, dict[str, Any]]]:
    """The submission's answers by question id, with their index; unknown and repeated ids are errors, or, given
    ``skipped``, answers left out and listed there (the first of a repeated id kept)."""
    if not isinstance(data, list):
        raise InputError(f"expected a DUDE submission, a list of answers; got {show(data)}", path=path)
    known = {str(q["questionId"]) for q in questions if isinstance(q, dict) and "questionId" in q}
    answers: dict[str, tuple[int, dict[str, Any]]] = {}
    for index, answer in enumerate(data):
        check = _Checker(path, f"[{index}]")
        try:
            answer = check.as_object(answer, "")
            qid = check.question_id(answer)
            if qid in answers:
                raise check.error("questionId", f"{qid!r} repeats [{answers[qid][0]}]")
            if qid not in known:
                # Most likely a submission for another ground-truth file: joining
                # would silently drop answers, so stop (the evaluator refuses too).
                raise check.error("questionId", f"{qid!r} is not a question of {truth_path}")
        except InputError as error:
            if skipped is None:
                raise
            skipped.append(error)
            continue
        answers[qid] = (index, answer)
    return answers


class _Questions:
    """The questions of the ground truth, read one at a time, each joined to its answer in the submission."""

    def __init__(self, path: str, submission: dict[str, tuple[int, dict[str, Any]]] | None, submission_path: str,
                 variants: bool, report: ImportReport) -> None:
        self.path, self.submission, self.submission_path = path, submission, submission_path
        self.variants, self.report = variants, report
        self.stats: Counter = Counter()
        self.seen: dict[str, int] = {}

    def read_all(self, questions: list[Any], *, skip_invalid: bool) -> Iterator[VQARecord]:
        records = each_source(enumerate(questions), self.read, report=self.report, skip_invalid=skip_invalid)
        for record in records:
            self.report.records += 1
            yield record
        self.notes()

    def read(self, item: tuple[int, Any]) -> Iterator[VQARecord]:
        """The record of one question; its counts join the others' once it is read whole."""
        index, raw = item
        stats: Counter = Counter()
        check = _Checker(self.path, f"data[{index}]")
        question = check.as_object(raw, "")
        qid = check.question_id(question)
        if qid in self.seen:
            raise check.error("questionId", f"{qid!r} repeats data[{self.seen[qid]}]")
        text = check.as_text(check.required(question, "question"), "question")
        answer_type = check.as_text(check.required(question, "answer_type"), "answer_type")
        kind = question_type(answer_type)
        stats["respelled"] += kind != answer_type
        is_list = _is_list(answer_type)
        stats["list"] += is_list
        answers = check.strings(check.required(question, "answers"), "answers")
        # Optional fields: absent or null both mean none.
        extra = check.strings(question.get("answers_variants") or [], "answers_variants")
        if not answers:
            if kind != NOT_ANSWERABLE:
                raise check.error("answers", f"empty for a question of type {answer_type!r}")
            # The evaluator reads an empty list of a not-answerable question as [""].
            answers = [""]
        if is_list:
            answers = [join_list(answers)]
            if extra:
                self.report.unmapped["answer variants of list questions (not used)"] += len(extra)
        elif self.variants and extra:
            answers += extra
            stats["variants"] += 1
        prediction = None
        if self.submission is not None:
            if qid in self.submission:
                answer_index, answer = self.submission[qid]
                prediction = _prediction(_Checker(self.submission_path, f"[{answer_index}]"), answer, is_list,
                                         self.report)
            else:
                self.report.unmapped["questions without an answer in the submission (no prediction)"] += 1
        evidence = _evidence(check, question)
        stats["evidence"] += bool(evidence)
        self.seen[qid] = index
        self.stats.update(stats)
        yield VQARecord(id=qid, question=text, answers=answers, prediction=prediction,
                        evidence=evidence or None, question_type=kind)

    def notes(self) -> None:
        stats, report = self.stats, self.report
        if stats["respelled"]:
            report.notes.append("questions whose answer_type 'not answerable' (with a space) is written as "
                                f"'{NOT_ANSWERABLE}', the evaluator's spelling: {stats['respelled']}")
        if stats["variants"]:
            report.notes.append("questions with answers_variants, accepted besides answers (the official evaluator "
                                f"reads answers only; variants=False does the same): {stats['variants']}")
        if stats["list"]:
            report.notes.append(f"list questions, their items sorted and joined with {LIST_SEPARATOR!r} on both "
                                "sides and scored by ANLS on the joined strings, not by DUDE's Hungarian NLSL: "
                                f"{stats['list']}")
        if self.submission is not None and stats["evidence"]:
            report.notes.append("questions with ground-truth evidence boxes, whose evidence_iou is 0 since DUDE "
                                f"submissions have no boxes: {stats['evidence']}")


def _prediction(check: _Checker, answer: dict[str, Any], is_list: bool, report: ImportReport) -> VQAPrediction:
    raw = check.required(answer, "answers")
    # The evaluator accepts a bare string as well as a list.
    items = [raw] if isinstance(raw, str) else check.strings(raw, "answers")
    if is_list:
        text = join_list(items)
    else:
        if len(items) > 1:
            # As the evaluator does ("Mistaken list prediction, assuming first").
            report.unmapped["extra answers to non-list questions (first answer kept)"] += len(items) - 1
        # An empty list is an empty answer, as in the evaluator.
        text = items[0] if items else ""
    raw_confidence = answer.get("answers_confidence")
    listed = isinstance(raw_confidence, list)
    confidences = raw_confidence if listed else [] if raw_confidence is None else [raw_confidence]
    if not confidences:
        report.unmapped[f"answers without answers_confidence (confidence set to {MISSING_CONFIDENCE})"] += 1
        return VQAPrediction(answer=text, confidence=MISSING_CONFIDENCE)
    if len(confidences) > 1:
        report.unmapped["extra answers_confidence values (the first is used)"] += len(confidences) - 1
    field = "answers_confidence[0]" if listed else "answers_confidence"
    confidence = check.as_number(confidences[0], field)
    if not 0.0 <= confidence <= 1.0:
        raise check.error(field, f"{show(confidences[0])} is not in [0, 1]")
    return VQAPrediction(answer=text, confidence=confidence)


def _evidence(check: _Checker, question: dict[str, Any]) -> list[Evidence]:
    evidence = []
    per_answer = check.as_list(question.get("answers_page_bounding_boxes") or [], "answers_page_bounding_boxes")
    for a, boxes in enumerate(per_answer):
        for b, raw in enumerate(check.as_list(boxes, f"answers_page_bounding_boxes[{a}]")):
            where = f"answers_page_bounding_boxes[{a}][{b}]"
            box = check.as_object(raw, where)
            for name in ("left", "top", "width", "height", "page"):
                value = check.as_number(check.required(box, name, where), f"{where}.{name}")
                if value < 0:
                    raise check.error(f"{where}.{name}", f"{show(box[name])} is negative")
            if box["page"] != int(box["page"]):
                raise check.error(f"{where}.page", f"{show(box['page'])} is not a page index")
            evidence.append(Evidence(page=int(box["page"]), bbox=evidence_box(box)))
    return evidence


class _Checker(FieldChecks):
    """Type checks on one question or answer that name the file and the field path of a problem."""

    def __init__(self, path: str, prefix: str) -> None:
        self.path, self.prefix = path, prefix

    def error(self, field: str, problem: str) -> InputError:
        where = f"{self.prefix}.{field}" if field else self.prefix
        return InputError(problem, path=self.path, field=where)

    def strings(self, value: Any, field: str) -> list[str]:
        return [self.as_text(item, f"{field}[{i}]") for i, item in enumerate(self.as_list(value, field))]

    def question_id(self, item: dict[str, Any]) -> str:
        qid = self.required(item, "questionId")
        # Ids are strings in DUDE; the evaluator applies str() and so may a submission.
        if isinstance(qid, bool) or not isinstance(qid, (str, int)):
            raise self.error("questionId", f"expected a string, got {show(qid)}")
        return str(qid)
