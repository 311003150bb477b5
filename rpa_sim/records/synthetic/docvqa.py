"""Document pages with a form, a table and a paragraph, and questions about them.

Each page has a title, a key-value form, a table and a paragraph, in a random
order, laid out on a letter-sized page with OCR words and boxes in reading
order (one segment per line). Every value on the page can be asked about: a
question has a ``question_type`` (``table``, ``form`` or ``paragraph``), one
accepted answer whose SMuDGE answer type (textual, numeric or hybrid) is drawn
with the settings' shares, and the answer's words as its ground-truth
evidence box. The prediction goes through the error model
(:mod:`rpa_sim.records.synthetic.errors`) and gets a confidence from the confidence
model (:mod:`rpa_sim.records.synthetic.confidence`), calibrated per question.

:func:`docvqa_dicts` yields plain canonical dicts (the fast path);
:func:`generate_docvqa` validates each into a :class:`~rpa_sim.records.models.VQARecord`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from rpa_sim.common.validation import StrictModel
from rpa_sim.common.workers import without_gc
from rpa_sim.records.models import VQARecord
from rpa_sim.records.synthetic._draws import (
    BLOCK,
    DOCVQA_STREAM,
    Draws,
    block_rng,
    check_n_seed,
    cumulative,
    record_id,
)
from rpa_sim.records.synthetic._layout import Runs
from rpa_sim.records.synthetic.confidence import (
    ConfidenceClass,
    ConfidenceSettings,
    confidence_class,
    draw_confidences,
    overlay_confidence,
)
from rpa_sim.records.synthetic.errors import (
    DEFAULT_VQA_RATES,
    VQA_KINDS,
    PageSpans,
    VQAErrorRates,
    anls_right,
    confuse,
    least_locatable,
    merge_rates,
)

__all__ = ["QUESTION_TYPES", "ANSWER_TYPES", "DocVQASettings", "DocVQAPlan", "docvqa_block", "docvqa_dicts",
           "generate_docvqa"]

QuestionType = Literal["table", "form", "paragraph"]
AnswerType = Literal["textual", "numeric", "hybrid"]
QUESTION_TYPES: tuple[QuestionType, ...] = ("table", "form", "paragraph")
ANSWER_TYPES: tuple[AnswerType, ...] = ("textual", "numeric", "hybrid")
Share = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]

_WORD_HEIGHT = 0.0155  # word height / page width: 11-point text on a letter page
_LINE_PITCH = 1.5
_CHAR_WIDTH = 0.5
_MARGIN = 0.08
_LETTER = 11 / 8.5


# The 11 DUDE sample questions: 5 textual (2 of them empty), 3 numeric, 3 hybrid.
_DEFAULT_ANSWER_TYPES: dict[AnswerType, float] = {"textual": 0.45, "numeric": 0.25, "hybrid": 0.30}
_DEFAULT_QUESTION_TYPES: dict[QuestionType, float] = {"table": 0.40, "form": 0.35, "paragraph": 0.25}


def _docvqa_confidence() -> ConfidenceSettings:
    # Form values are short and clean, paragraph spans the hardest to delimit: sharpest to flattest.
    return ConfidenceSettings(concentration={"form": 1.0, "table": 1.5, "paragraph": 2.0})


class DocVQASettings(StrictModel):
    """Settings of :func:`generate_docvqa`; loadable from a YAML mapping (``model_validate``).

    Attributes
    ----------
    errors : dict of str to VQAErrorRates
        Error rates per question type (``table``, ``form``, ``paragraph``);
        overlaid on the defaults.
    error_scale : float
        Every error rate times this.
    confidence : ConfidenceSettings
        The confidence model; ``concentration`` is per question type.
    answer_types : dict of str to float
        Shares (weights) of textual, numeric and hybrid answers.
    question_types : dict of str to float
        Shares (weights) of table, form and paragraph questions.
    questions_per_page : int
        Questions asked about each page (consecutive records share a page).
    page_widths : tuple of int
        The range of page widths in pixels; pages are letter-shaped.

    Examples
    --------
    >>> settings = DocVQASettings.model_validate({"answer_types": {"numeric": 2, "textual": 1, "hybrid": 1},
    ...                                           "errors": {"table": {"neighbour": 0.2}}})
    >>> settings.rates_of("table").neighbour, settings.rates_of("table").ocr
    (0.2, 0.03)
    >>> DocVQASettings(question_types={"chart": 1.0})
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for DocVQASettings
    question_types.chart...
    """

    errors: dict[QuestionType, VQAErrorRates] = Field(
        default_factory=lambda: {name: DEFAULT_VQA_RATES[name] for name in QUESTION_TYPES})
    error_scale: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 1.0
    confidence: ConfidenceSettings = Field(default_factory=_docvqa_confidence)
    answer_types: dict[AnswerType, Share] = Field(default_factory=lambda: dict(_DEFAULT_ANSWER_TYPES))
    question_types: dict[QuestionType, Share] = Field(default_factory=lambda: dict(_DEFAULT_QUESTION_TYPES))
    questions_per_page: Annotated[int, Field(ge=1, le=8)] = 4
    page_widths: tuple[Annotated[int, Field(ge=200)], Annotated[int, Field(ge=200)]] = (800, 1700)

    @field_validator("errors", mode="before")
    @classmethod
    def _overlay_errors(cls, value: Any) -> Any:
        return merge_rates(value, DEFAULT_VQA_RATES)

    @field_validator("confidence", mode="before")
    @classmethod
    def _overlay_confidence(cls, value: Any) -> Any:
        return overlay_confidence(value, _docvqa_confidence())

    @field_validator("confidence")
    @classmethod
    def _known_concentration_names(cls, value: ConfidenceSettings) -> ConfidenceSettings:
        for name in value.concentration:
            if name not in QUESTION_TYPES:
                raise ValueError(f"unknown question type {name!r} in concentration; expected one of "
                                 f"{list(QUESTION_TYPES)}")
        return value

    @field_validator("answer_types", "question_types")
    @classmethod
    def _positive_shares(cls, value: dict[str, float], info: Any) -> dict[str, float]:
        if sum(value.values()) <= 0:
            raise ValueError(f"{info.field_name} needs a positive share, got {value!r}")
        return value

    @field_validator("page_widths")
    @classmethod
    def _ordered_widths(cls, value: tuple[int, int]) -> tuple[int, int]:
        if value[0] > value[1]:
            raise ValueError(f"page_widths must be (smallest, largest), got {list(value)!r}")
        return value

    @model_validator(mode="after")
    def _scaled_rates_fit(self) -> DocVQASettings:
        for name in QUESTION_TYPES:
            self.rates_of(name)
        return self

    def rates_of(self, question_type: QuestionType) -> VQAErrorRates:
        """The error rates of a question type, times ``error_scale``."""
        rates = self.errors.get(question_type, DEFAULT_VQA_RATES[question_type])
        return rates if self.error_scale == 1.0 else rates.scaled(self.error_scale)


# --------------------------------------------------------------------------- vocabulary and values

_FIRST = ("Maria", "James", "Anna", "Robert", "Linda", "Peter", "Susan", "David", "Karen", "Thomas", "Helen",
          "Mark", "Laura", "Paul", "Nancy", "George", "Ruth", "Frank", "Alice", "Henry")
_LAST = ("Lopez", "Smith", "Johnson", "Brown", "Garcia", "Miller", "Davis", "Wilson", "Moore", "Taylor",
         "Anderson", "Thomas", "Jackson", "Martin", "Harris", "Clark", "Lewis", "Walker", "Young", "King")
_CITIES = ("Boston", "Denver", "Chicago", "Atlanta", "Seattle", "Houston", "Phoenix", "Portland", "Dallas",
           "Memphis", "Detroit", "Richmond", "Omaha", "Tucson", "Raleigh", "Baltimore")
_COUNTRIES = ("Canada", "Mexico", "France", "Germany", "Japan", "Brazil", "Kenya", "Norway", "Spain", "India")
_DEPARTMENTS = ("Marketing", "Finance", "Research", "Operations", "Sales", "Personnel", "Engineering", "Legal")
_STATUSES = ("Approved", "Pending", "Rejected", "Completed", "Submitted", "Cancelled")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_PRODUCTS = ("Aspirin", "Vitamins", "Bandages", "Syringes", "Gloves", "Inhalers", "Ointment", "Lozenges")
_TABLE_ROWS = {
    "Category": ("Salaries", "Travel", "Office Supplies", "Equipment", "Marketing", "Research", "Rent",
                 "Utilities", "Training", "Insurance", "Maintenance", "Consulting"),
    "Region": ("North", "South", "East", "West", "Central", "Northeast", "Southwest", "Pacific", "Midwest",
               "Coastal"),
    "Product": _PRODUCTS + ("Thermometers", "Masks"),
}
_ALL_ROWS = tuple(label for labels in _TABLE_ROWS.values() for label in labels)
_TITLES = ("ANNUAL REPORT", "EXPENSE SUMMARY", "PROJECT STATUS", "QUARTERLY REVIEW", "BUDGET REQUEST",
           "PROGRAM EVALUATION")


def _value(kind: str, d: Draws) -> str:
    """A fresh value of a kind; the kind fixes its answer type (see :data:`_KIND_TYPES`)."""
    if kind == "person":
        return f"{d.pick(_FIRST)} {d.pick(_LAST)}"
    if kind in _WORD_KINDS:
        return d.pick(_WORD_KINDS[kind])
    if kind == "account":
        return str(d.between(100_000, 999_999))
    if kind in ("employee", "zip"):
        return str(d.between(10_000, 99_999))
    if kind == "year":
        return str(d.between(1962, 2019))
    if kind == "count":
        return str(d.between(40, 2_400))
    if kind == "integer":
        return str(d.between(12, 9_800))
    if kind == "date":
        return f"{d.between(1, 12):02d}/{d.between(1, 28):02d}/{d.between(1990, 2019)}"
    if kind == "invoice":
        return f"INV-{d.between(1000, 9999)}"
    if kind == "phone":
        return f"({d.between(200, 989)}) {d.between(200, 989)}-{d.between(1000, 9999)}"
    if kind == "currency":
        return f"${d.between(120, 98_000):,}"
    if kind == "thousands":
        return f"{d.between(1_200, 98_000):,}"
    if kind == "percent":
        return f"{d.between(1, 60)}.{d.below(10)}%" if d.chance(0.5) else f"{d.between(2, 85)}%"
    if kind == "dose":
        return f"{d.pick((5, 10, 12, 20, 25, 50, 100, 250))} mg"
    if kind == "row":
        return d.pick(_ALL_ROWS)
    raise ValueError(f"unknown value kind {kind!r}")


_WORD_KINDS = {"city": _CITIES, "country": _COUNTRIES, "department": _DEPARTMENTS, "status": _STATUSES,
               "month": _MONTHS, "product": _PRODUCTS}
_KIND_TYPES = {"person": "textual", "city": "textual", "country": "textual", "department": "textual",
               "status": "textual", "month": "textual", "product": "textual", "row": "textual",
               "account": "numeric", "employee": "numeric", "zip": "numeric", "year": "numeric",
               "count": "numeric", "integer": "numeric",
               "date": "hybrid", "invoice": "hybrid", "phone": "hybrid", "currency": "hybrid",
               "thousands": "hybrid", "percent": "hybrid", "dose": "hybrid"}

# (label, value kind, question)
_FORM_FIELDS = {
    "textual": (("Name:", "person", "What is the name on the form?"),
                ("Department:", "department", "Which department is named on the form?"),
                ("City:", "city", "Which city is given on the form?"),
                ("Status:", "status", "What is the status of the request?"),
                ("Country:", "country", "Which country is given on the form?")),
    "numeric": (("Account No.:", "account", "What is the account number?"),
                ("Employee ID:", "employee", "What is the employee ID?"),
                ("Zip Code:", "zip", "What is the zip code?"),
                ("Year:", "year", "Which year does the form refer to?")),
    "hybrid": (("Date:", "date", "What is the date on the form?"),
               ("Invoice No.:", "invoice", "What is the invoice number?"),
               ("Phone:", "phone", "What is the phone number?"),
               ("Amount Due:", "currency", "What is the amount due?")),
}
# (column name, value kind); every table has an integer column and a hybrid one.
_INTEGER_COLUMNS = (("Headcount", "integer"), ("Quantity", "integer"), ("Volume", "integer"))
_HYBRID_COLUMNS = (("Cost", "currency"), ("Revenue", "currency"), ("Budget", "thousands"), ("Share", "percent"),
                   ("Growth", "percent"))
# Sentences of the paragraph: words and {kind} slots, with a question per slot.
_SENTENCES = (
    ("The survey was carried out in {city} in {year} by a team led by {person} for the regional office.",
     {"city": "Where was the survey carried out?", "year": "In which year was the survey carried out?",
      "person": "Who led the survey team?"}),
    ("A total of {count} households took part and each received a {dose} supplement every week.",
     {"count": "How many households took part in the survey?",
      "dose": "What supplement dose did each household receive?"}),
    ("Sales of {product} rose by {percent} over the previous year according to the annual report.",
     {"product": "Sales of which product rose over the previous year?",
      "percent": "By how much did sales of {product} rise over the previous year?"}),
    ("The final budget of {currency} was approved by {person} in {month} after a long review.",
     {"currency": "What was the final budget?", "person": "Who approved the final budget?",
      "month": "In which month was the final budget approved?"}),
)


# --------------------------------------------------------------------------- the page


@dataclass
class _Slot:
    """A value printed on the page that a question can ask for (``question`` empty: never asked)."""

    question_type: QuestionType
    kind: str
    question: str
    answer: str
    start: int = 0  # its words in the page's word list
    stop: int = 0
    neighbours: list[int] = field(default_factory=list)  # slots a neighbouring-cell error reads instead

    @property
    def answer_type(self) -> str:
        return _KIND_TYPES[self.kind]


@dataclass
class _Cell:
    """Words at a column of a line (in characters from the left margin), possibly a slot's value."""

    column: float
    words: list[str]
    slot: int | None = None


def _shuffled(items: list[Any], d: Draws) -> list[Any]:
    items = list(items)
    return [items.pop(d.below(len(items))) for _ in range(len(items))]


class _PageBuilder:
    """Lines of cells and the slots they hold; :meth:`layout` turns them into OCR words."""

    def __init__(self, draws: Draws, width: int) -> None:
        self.draws = draws
        self.width = width
        self.height = round(width * _LETTER)
        self.chars_per_line = int((1 - 2 * _MARGIN) / (_WORD_HEIGHT * _CHAR_WIDTH))
        self.lines: list[list[_Cell]] = []
        self.slots: list[_Slot] = []

    def slot(self, slot: _Slot) -> int:
        self.slots.append(slot)
        return len(self.slots) - 1

    def build(self) -> None:
        title = self.draws.pick(_TITLES).split()
        self.lines += [[_Cell((self.chars_per_line - len(" ".join(title))) / 2, title)], []]
        for block in _shuffled([self.form, self.table, self.paragraph], self.draws):
            block()
            self.lines.append([])

    def form(self) -> None:
        d = self.draws
        fields = []
        for answer_type in ANSWER_TYPES:  # two fields of each answer type, and one more
            choices = list(_FORM_FIELDS[answer_type])
            fields += [choices.pop(d.below(len(choices))) for _ in range(2)]
        fields.append(d.pick([f for group in _FORM_FIELDS.values() for f in group if f not in fields]))
        ids = []
        for label, kind, question in _shuffled(fields, d):
            ids.append(self.slot(_Slot("form", kind, question, _value(kind, d))))
            self.lines.append([_Cell(0, label.split()), _Cell(22, self.slots[ids[-1]].answer.split(), ids[-1])])
        for i, slot in enumerate(ids):
            self.slots[slot].neighbours = [ids[j] for j in (i - 1, i + 1) if 0 <= j < len(ids)]

    def table(self) -> None:
        d = self.draws
        header = d.pick(tuple(_TABLE_ROWS))
        hybrid = list(_HYBRID_COLUMNS)
        columns = [d.pick(_INTEGER_COLUMNS), hybrid.pop(d.below(len(hybrid)))]
        if d.chance(0.5):
            columns.append(hybrid.pop(d.below(len(hybrid))))
        columns = _shuffled(columns, d)
        labels = list(_TABLE_ROWS[header])
        rows = [labels.pop(d.below(len(labels))) for _ in range(d.between(4, 6))]
        offsets = [0.0] + [20.0 + 16.0 * c for c in range(len(columns))]
        self.lines.append([_Cell(0, f"Table {d.between(1, 9)}: {d.pick(_TITLES).title()}".split())])
        self.lines.append([_Cell(o, [name]) for o, name in zip(offsets, [header] + [name for name, _ in columns])])
        grid: list[list[int]] = []  # per row: the label's slot, then the cells'
        for row in rows:
            ids = [self.slot(_Slot("table", "row", "", row))]
            for name, kind in columns:
                ids.append(self.slot(_Slot("table", kind, f"What is the {name.lower()} of {row}?", _value(kind, d))))
            grid.append(ids)
            self.lines.append([_Cell(o, self.slots[i].answer.split(), i) for o, i in zip(offsets, ids)])
        for r, ids in enumerate(grid):
            for c, slot in enumerate(ids):
                # the cells above and below, and for a value those beside it (never a row label)
                near = [(r - 1, c), (r + 1, c)] + ([(r, c - 1), (r, c + 1)] if c else [])
                self.slots[slot].neighbours = [grid[i][j] for i, j in near
                                               if 0 <= i < len(grid) and (c == 0 or 1 <= j < len(ids))]
            # a row label is asked for through a value that only its row has in that column
            for c in range(1, len(ids)):
                value = self.slots[ids[c]].answer
                if sum(self.slots[other[c]].answer == value for other in grid) == 1:
                    self.slots[ids[0]].question = (f"Which {header.lower()} has a {columns[c - 1][0].lower()} "
                                                   f"of {value}?")
                    break

    def paragraph(self) -> None:
        d = self.draws
        units: list[_Cell] = []  # column filled in when wrapping
        ids = []
        for template, questions in _shuffled(list(_SENTENCES), d):
            tokens = template.split()
            values = {token[1:-1]: _value(token[1:-1], d) for token in tokens if token.startswith("{")}
            for token in tokens:
                if token.startswith("{"):
                    kind = token[1:-1]
                    ids.append(self.slot(_Slot("paragraph", kind, questions[kind].format(**values), values[kind])))
                    units.append(_Cell(0, values[kind].split(), ids[-1]))
                else:
                    units.append(_Cell(0, [token]))
        for slot in ids:
            same = [i for i in ids if i != slot and self.slots[i].answer_type == self.slots[slot].answer_type]
            self.slots[slot].neighbours = same or [i for i in ids if i != slot]
        # wrap, never splitting a value over two lines (a span cannot cross a segment)
        line: list[_Cell] = []
        used = 0.0
        for unit in units:
            size = len(" ".join(unit.words))
            if line and used + size > self.chars_per_line:
                self.lines.append(line)
                line, used = [], 0.0
            unit.column = used
            line.append(unit)
            used += size + 1
        self.lines.append(line)

    def layout(self) -> dict[str, Any]:
        """The page's OCR words in reading order, one segment per line; fills in the slots' word ranges."""
        margin = self.width * _MARGIN
        word = min(self.width * _WORD_HEIGHT, (self.height - 2 * margin) / (len(self.lines) * _LINE_PITCH))
        char = word * _CHAR_WIDTH
        runs = Runs()
        for number, line in enumerate(self.lines):
            for cell in line:
                if cell.slot is not None:
                    self.slots[cell.slot].start = len(runs)
                runs.add(cell.words, x=margin + cell.column * char, line=number)
                if cell.slot is not None:
                    self.slots[cell.slot].stop = len(runs)
        boxes = runs.boxes(char=char, height=word, top=margin, pitch=word * _LINE_PITCH,
                           jitter=self.draws.uniforms(2 * len(runs)))
        words = [{"text": text, "bbox": box, "segment": number}
                 for text, box, number in zip(runs.texts, boxes, runs.lines)]
        return {"width": float(self.width), "height": float(self.height), "words": words}


def _box(words: list[dict[str, Any]], start: int, stop: int) -> list[float]:
    boxes = [words[i]["bbox"] for i in range(start, stop)]
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


def _jittered(box: list[float], d: Draws) -> list[float]:
    """A predicted evidence box: each edge off by up to 15% of the box's height."""
    x0, y0, x1, y1 = box
    off = [(u - 0.5) * 0.3 * (y1 - y0) for u in d.uniforms(4)]
    x0, x1 = x0 + off[0], max(x0 + off[0], x1 + off[2])
    y0, y1 = y0 + off[1], max(y0 + off[1], y1 + off[3])
    return [float(round(x0)), float(round(y0)), float(round(x1)), float(round(y1))]


def _wrong_span(slot: _Slot, words: list[dict[str, Any]], d: Draws) -> tuple[int, int] | None:
    """A run of words overlapping or next to the answer, within its line."""
    start, stop = slot.start, slot.stop
    segment = words[start]["segment"]
    options = []
    if stop < len(words) and words[stop]["segment"] == segment:
        options.append((start, stop + 1))
    if start > 0 and words[start - 1]["segment"] == segment:
        options.append((start - 1, stop))
    if stop - start >= 2:
        options += [(start + 1, stop), (start, stop - 1)]
    return d.pick(options) if options else None


# --------------------------------------------------------------------------- questions and predictions


@dataclass(frozen=True)
class DocVQAPlan:
    """What every page needs of the settings, precomputed once."""

    settings: DocVQASettings
    rates: dict[str, VQAErrorRates]
    answer_types: list[float]
    records_per_block: int

    @classmethod
    def of(cls, settings: DocVQASettings) -> DocVQAPlan:
        return cls(settings=settings, rates={t: settings.rates_of(t) for t in QUESTION_TYPES},
                   answer_types=cumulative([settings.answer_types.get(t, 0.0) for t in ANSWER_TYPES]),
                   records_per_block=BLOCK * settings.questions_per_page)


def _choose_questions(slots: list[_Slot], plan: DocVQAPlan, d: Draws) -> list[int]:
    """Draw the answer type by its share, then the question type by its share among those that have one."""
    by_type: dict[str, list[int]] = {name: [] for name in ANSWER_TYPES}
    for i, slot in enumerate(slots):
        if slot.question:
            by_type[slot.answer_type].append(i)
    shares = plan.settings.question_types
    chosen: list[int] = []
    for _ in range(plan.settings.questions_per_page):
        pool = [i for i in by_type[ANSWER_TYPES[d.weighted(plan.answer_types)]] if i not in chosen]
        types = sorted({slots[i].question_type for i in pool}, key=QUESTION_TYPES.index)
        weights = [shares.get(t, 0.0) for t in types]
        if not pool or sum(weights) <= 0:  # a page short of that answer type: any question left
            chosen.append(d.pick([i for ids in by_type.values() for i in ids if i not in chosen]))
            continue
        question_type = types[d.weighted(cumulative(weights))]
        chosen.append(d.pick([i for i in pool if slots[i].question_type == question_type]))
    return chosen


_ALL_KINDS = ("correct",) + VQA_KINDS


def _predict(slot: _Slot, slots: list[_Slot], words: list[dict[str, Any]], spans: PageSpans, plan: DocVQAPlan,
             d: Draws) -> tuple[str, str, bool, dict[str, float], list[float] | None, float]:
    """One question's fate: ``(kind, answer, right, wrong kinds' weights, evidence box, right share)``.

    Every candidate answer is made first, so that the question's right share
    (which kinds would still be right by ANLS) is known exactly: the
    confidence model needs it to be calibrated.
    """
    rates = plan.rates[slot.question_type]
    truth = [slot.answer]
    own = _box(words, slot.start, slot.stop)
    neighbour = slots[d.pick(slot.neighbours)] if slot.neighbours else None
    span = _wrong_span(slot, words, d)
    candidates: dict[str, tuple[str, list[float]] | None] = {
        "correct": (slot.answer, own),
        "ocr": (confuse(slot.answer, d), own),
        "neighbour": (neighbour.answer, _box(words, neighbour.start, neighbour.stop)) if neighbour else None,
        "wrong_span": (" ".join(words[i]["text"] for i in range(*span)), _box(words, *span)) if span else None,
    }
    # without a wrong span the model reads the neighbour; without a neighbour, it makes one up
    if candidates["wrong_span"] is None:
        candidates["wrong_span"] = candidates["neighbour"]
    right = {kind: candidate is not None and anls_right(truth, candidate[0]) for kind, candidate in candidates.items()}
    exclusive = rates.exclusive()
    share = 1.0 - sum(exclusive.values())
    share += sum(rate for kind, rate in exclusive.items() if right.get(kind, False))
    wrong = {kind: rate for kind, rate in exclusive.items() if not right.get(kind, False)}
    kind = _ALL_KINDS[d.weighted(cumulative([max(0.0, 1.0 - sum(exclusive.values())), *exclusive.values()]))]
    candidate = candidates.get(kind)
    if kind == "missed":
        return kind, "", False, wrong, None, share
    if candidate is None:  # a hallucination, planned or for want of a neighbour
        answer = least_locatable(lambda: _value(slot.kind, d), spans, reject=lambda v: anls_right(truth, v),
                                 fallback="none")
        return kind, answer, False, wrong, _jittered(words[d.below(len(words))]["bbox"], d), share
    return kind, candidate[0], right[kind], wrong, _jittered(candidate[1], d), share


def docvqa_block(block: int, seed: int, plan: DocVQAPlan) -> list[dict[str, Any]]:
    """The questions of :data:`~rpa_sim.records.synthetic._draws.BLOCK` pages, from one random stream."""
    with without_gc():
        return _build_page_block(block, seed, plan)


def _build_page_block(block: int, seed: int, plan: DocVQAPlan) -> list[dict[str, Any]]:
    d = Draws(block_rng(seed, DOCVQA_STREAM, block))
    settings = plan.settings
    per_page = settings.questions_per_page
    low, high = settings.page_widths
    pages = []
    items: list[tuple[ConfidenceClass, bool, str]] = []
    for _ in range(BLOCK):
        builder = _PageBuilder(d, d.between(low, high))
        builder.build()
        page = builder.layout()
        words = page["words"]
        spans = PageSpans([[word for cell in line for word in cell.words] for line in builder.lines])
        asked = []
        for index in _choose_questions(builder.slots, plan, d):
            slot = builder.slots[index]
            kind, answer, right, wrong, evidence, share = _predict(slot, builder.slots, words, spans, plan, d)
            cls = confidence_class(share, settings.confidence.concentration_of(slot.question_type), wrong,
                                   settings.confidence.plausibility)
            items.append((cls, right, kind))
            asked.append((slot, answer, evidence))
        pages.append((page, asked))
    confidences = iter(draw_confidences(d, items, settings.confidence))
    records = []
    for p, (page, asked) in enumerate(pages):
        document = {"pages": [page]}
        for j, (slot, answer, evidence) in enumerate(asked):
            prediction: dict[str, Any] = {"answer": answer, "confidence": next(confidences)}
            if evidence is not None:
                prediction["evidence"] = [{"page": 0, "bbox": evidence}]
            records.append({
                "id": record_id("question", seed, (block * BLOCK + p) * per_page + j),
                "question": slot.question,
                "answers": [slot.answer],
                "prediction": prediction,
                "evidence": [{"page": 0, "bbox": _box(page["words"], slot.start, slot.stop)}],
                "question_type": slot.question_type,
                "document": document,
            })
    return records


def docvqa_dicts(n: int, *, seed: int, settings: DocVQASettings | None = None) -> Iterator[dict[str, Any]]:
    """Generate ``n`` questions as plain dicts in the canonical form of docs/formats.md.

    Consecutive questions share a page (``questions_per_page``); the dicts of
    one page share its document dict. See :func:`generate_docvqa`.

    Examples
    --------
    >>> first = next(docvqa_dicts(1, seed=3))
    >>> first["id"], first["question_type"] in QUESTION_TYPES, len(first["answers"])
    ('question-s3-000000', True, 1)
    """
    check_n_seed(n, seed)
    plan = DocVQAPlan.of(settings if settings is not None else DocVQASettings())
    for start in range(0, n, plan.records_per_block):
        yield from docvqa_block(start // plan.records_per_block, seed, plan)[:n - start]


def generate_docvqa(n: int, *, seed: int, settings: DocVQASettings | None = None) -> Iterator[VQARecord]:
    """Generate ``n`` document questions with OCR, evidence and predictions, deterministically.

    Parameters
    ----------
    n : int
        Number of questions (at least 0).
    seed : int
        Non-negative seed; the same ``n``, seed and settings give the same
        records, and record ``i`` does not depend on ``n``.
    settings : DocVQASettings, optional
        Defaults to ``DocVQASettings()``.

    Yields
    ------
    VQARecord
        Validated once per record from :func:`docvqa_dicts`.

    Examples
    --------
    >>> from rpa_sim.evaluate.metrics.smudge import answer_type
    >>> records = list(generate_docvqa(8, seed=2))
    >>> sorted({r.question_type for r in records}) <= ["form", "paragraph", "table"]
    True
    >>> all(answer_type(r.answers[0]) in ("textual", "numeric", "hybrid") for r in records)
    True
    """
    for data in docvqa_dicts(n, seed=seed, settings=settings):
        yield VQARecord.model_validate(data)

