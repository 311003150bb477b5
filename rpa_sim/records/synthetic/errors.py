"""The error model of the generators: what a document-AI model gets wrong, and how often.

A receipt's prediction is made entity by entity. Each ground-truth entity
meets exactly one fate, drawn from the rates of its field:

``correct``
    predicted as it is;
``ocr``
    an OCR character confusion (``0/O``, ``1/l``, ``5/S``, ``8/B``, ``,/.``):
    a near miss, close to the page but not on it;
``neighbour``
    the value of a neighbouring cell (the next item's price, another total):
    on the page, so grounded, but wrong;
``hallucination``
    a plausible value that is not on the page (low locatability);
``missed``
    not predicted at all (a KIEval addition);
``moved``
    predicted right but put in another group (an addition here, a deletion
    there: a group error that grouping-blind matching would not see);
``duplicate``
    predicted right, and once more (a deletion).

Independently, with the rate ``extra``, the model also outputs an entity the
ground truth does not annotate (``menu.unitprice`` where the receipt prints
none), with a value taken from the page: the commonest deletion in the real
sample. A question meets one of ``correct``, ``ocr``, ``neighbour`` (another
cell or field of the page), ``wrong_span`` (a span of the page overlapping or
next to the answer), ``hallucination`` or ``missed`` (an empty answer).

The rates' defaults and how they were measured are in ``docs/generators.md``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import Field, model_validator
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import extractOne

from rpa_sim.common.text import normalize
from rpa_sim.common.validation import StrictModel
from rpa_sim.records.synthetic._draws import Draws, cumulative

__all__ = [
    "KIE_KINDS",
    "VQA_KINDS",
    "FIELD_CLASSES",
    "field_class",
    "KIEErrorRates",
    "VQAErrorRates",
    "DEFAULT_KIE_RATES",
    "DEFAULT_VQA_RATES",
    "merge_rates",
    "confuse",
    "Predicted",
    "KIEPlan",
    "kie_predictions",
    "PageSpans",
    "least_locatable",
    "anls_right",
]

KIE_KINDS: tuple[str, ...] = ("ocr", "neighbour", "hallucination", "missed", "moved", "duplicate")
"""The exclusive error kinds of a KIE entity (``extra`` comes on top)."""
VQA_KINDS: tuple[str, ...] = ("ocr", "neighbour", "wrong_span", "hallucination", "missed")
"""The exclusive error kinds of a question."""
FIELD_CLASSES: tuple[str, ...] = ("money", "count", "text")
"""Field classes: rates and confidence sharpness can be set per class or per key."""

Rate = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


def field_class(key: str) -> str:
    """The class of a field: ``money`` (``*price``), ``count`` (``*cnt``) or ``text``.

    >>> field_class("menu.price"), field_class("total.menuqty_cnt"), field_class("store.nm")
    ('money', 'count', 'text')
    """
    if key.endswith("price"):
        return "money"
    if key.endswith("cnt"):
        return "count"
    return "text"


class _Rates(StrictModel):
    kinds: ClassVar[tuple[str, ...]]
    """The mutually exclusive kinds, in their canonical order."""

    @model_validator(mode="after")
    def _exclusive_kinds_fit(self) -> _Rates:
        total = sum(self.exclusive().values())
        if total > 1.0 + 1e-12:
            shown = ", ".join(f"{kind}={rate:g}" for kind, rate in self.exclusive().items() if rate)
            raise ValueError(f"error rates add up to {total:g} > 1 ({shown})")
        return self

    def exclusive(self) -> dict[str, float]:
        """The rates of the mutually exclusive kinds, in their canonical order."""
        return {kind: getattr(self, kind) for kind in self.kinds}

    def scaled(self: _R, factor: float) -> _R:
        """Every rate times ``factor`` (validated again: the exclusive ones must still fit in 1)."""
        return type(self).model_validate({name: rate * factor for name, rate in self.model_dump().items()})


_R = TypeVar("_R", bound=_Rates)


class KIEErrorRates(_Rates):
    """Error rates of one KIE field, per ground-truth entity.

    ``ocr + neighbour + hallucination + missed + moved + duplicate`` must not
    exceed 1; the rest is the share predicted correctly. ``extra`` is drawn
    independently.

    Examples
    --------
    >>> rates = KIEErrorRates(ocr=0.1, missed=0.1, duplicate=0.05, extra=0.05)
    >>> round(rates.right_share(), 4)  # (1 - 0.1 - 0.1) right of (1 - 0.1 + 0.05 + 0.05) predictions
    0.8
    >>> KIEErrorRates(ocr=0.7, missed=0.4)
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for KIEErrorRates
      Value error, error rates add up to 1.1 > 1 (ocr=0.7, missed=0.4) ...
    """

    kinds = KIE_KINDS
    ocr: Rate = 0.0
    """An OCR character confusion of the value."""
    neighbour: Rate = 0.0
    """The value of a neighbouring cell on the page."""
    hallucination: Rate = 0.0
    """A value not on the page."""
    missed: Rate = 0.0
    """Not predicted."""
    moved: Rate = 0.0
    """Predicted in another group."""
    duplicate: Rate = 0.0
    """Predicted right, and a second time."""
    extra: Rate = 0.0
    """An additional entity with a key the ground truth does not annotate (independent of the rest)."""

    def right_share(self, *, extra_possible: bool = True) -> float:
        """The expected share of right predictions among this field's predictions.

        Predictions are the entity itself (unless missed), duplicate copies and
        extra entities; right are the correct ones and the original of a
        duplicate. ``extra_possible=False`` leaves extras out (a group with no
        unannotated key to add).
        """
        wrong_value = self.ocr + self.neighbour + self.hallucination + self.moved
        predictions = 1.0 - self.missed + self.duplicate + (self.extra if extra_possible else 0.0)
        return (1.0 - self.missed - wrong_value) / predictions if predictions > 0 else 0.0


class VQAErrorRates(_Rates):
    """Error rates of one question type, per question; their sum must not exceed 1.

    >>> VQAErrorRates(neighbour=0.1, wrong_span=0.05).exclusive()["wrong_span"]
    0.05
    """

    kinds = VQA_KINDS
    ocr: Rate = 0.0
    """OCR character confusions in the answer."""
    neighbour: Rate = 0.0
    """The value of a neighbouring cell or field, or another entity of the paragraph."""
    wrong_span: Rate = 0.0
    """A span of the page overlapping or next to the answer."""
    hallucination: Rate = 0.0
    """An answer of the same type that is not on the page."""
    missed: Rate = 0.0
    """No answer (the empty string)."""


# Measured on the 100 Qwen2-VL-72B / CORD receipts (kieval_qwen72b_cord), per ground-truth entity of
# each class; docs/generators.md gives the counts and the mapping of KIEval outcomes to kinds.
DEFAULT_KIE_RATES: dict[str, KIEErrorRates] = {
    "money": KIEErrorRates(ocr=0.08, neighbour=0.02, hallucination=0.01, missed=0.08, moved=0.01,
                           duplicate=0.005, extra=0.10),
    "count": KIEErrorRates(ocr=0.10, neighbour=0.01, hallucination=0.04, missed=0.06, moved=0.01,
                           duplicate=0.025, extra=0.12),
    "text": KIEErrorRates(ocr=0.14, neighbour=0.015, hallucination=0.01, missed=0.055, moved=0.01,
                          duplicate=0.005, extra=0.05),
}
# No public sample of VQA errors with their kinds exists here: chosen (docs/generators.md).
DEFAULT_VQA_RATES: dict[str, VQAErrorRates] = {
    "table": VQAErrorRates(ocr=0.03, neighbour=0.08, wrong_span=0.04, hallucination=0.03, missed=0.02),
    "form": VQAErrorRates(ocr=0.03, neighbour=0.03, wrong_span=0.02, hallucination=0.01, missed=0.01),
    "paragraph": VQAErrorRates(ocr=0.02, neighbour=0.04, wrong_span=0.05, hallucination=0.03, missed=0.01),
}


def merge_rates(given: Any, defaults: Mapping[str, _Rates], *, fallback: Callable[[str], str] | None = None,
                ) -> Any:
    """Overlay a user's partial rates mapping on the defaults (a ``mode="before"`` validator helper).

    A name missing from ``given`` keeps its defaults; a kind missing from a
    given name keeps that name's default rate, or, for a name without
    defaults, the default of ``fallback(name)`` (e.g. a field's class).

    >>> merged = merge_rates({"menu.nm": {"missed": 0.5}}, DEFAULT_KIE_RATES, fallback=field_class)
    >>> merged["menu.nm"]["missed"], merged["menu.nm"]["ocr"], sorted(merged)
    (0.5, 0.14, ['count', 'menu.nm', 'money', 'text'])
    """
    if not isinstance(given, Mapping):
        return given  # pydantic reports the wrong type
    merged: dict[str, Any] = {name: rates.model_dump() for name, rates in defaults.items()}
    for name, rates in given.items():
        base = defaults.get(name)
        if base is None and fallback is not None:
            base = defaults.get(fallback(name))
        if isinstance(rates, Mapping):
            merged[name] = {**(base.model_dump() if base is not None else {}), **rates}
        else:
            merged[name] = rates
    return merged


# --------------------------------------------------------------------------- values

_CONFUSIONS = {"0": "O", "O": "0", "o": "0", "1": "l", "l": "1", "I": "1", "5": "S", "S": "5", "s": "5",
               "8": "B", "B": "8", ",": ".", ".": ","}
# In the real sample 29 of the 98 near-miss substitutions swap the thousands separator throughout
# ("60,000" for "60.000"): a model normalising the format, not one misread character.
_SEPARATOR_SHARE = 0.3


def confuse(value: str, draws: Draws) -> str:
    """An OCR confusion of ``value``: always a different string.

    With a separator in the value, 30% of confusions swap ``,`` and ``.``
    throughout; otherwise one character (two, a quarter of the time) becomes
    its look-alike. A value with no confusable character loses one (or, when
    it has a single character, gains one).

    Examples
    --------
    >>> from rpa_sim.records.synthetic._draws import block_rng
    >>> draws = Draws(block_rng(0, 0, 0))
    >>> [confuse(v, draws) for v in ("75,000", "TEA", "x 1")]
    ['75,O00', 'TE', 'x l']
    """
    if ("," in value or "." in value) and draws.chance(_SEPARATOR_SHARE):
        return value.translate(_SWAP_SEPARATORS)
    positions = [i for i, c in enumerate(value) if c in _CONFUSIONS]
    if not positions:
        if len(value) > 1:
            i = draws.below(len(value))
            return value[:i] + value[i + 1:]
        return value + value if value else "."
    chars = list(value)
    for _ in range(2 if len(positions) > 1 and draws.chance(0.25) else 1):
        i = positions.pop(draws.below(len(positions)))
        chars[i] = _CONFUSIONS[chars[i]]
    return "".join(chars)


_SWAP_SEPARATORS = str.maketrans({",": ".", ".": ","})


class PageSpans:
    """The runs of consecutive words within each line of a page, to estimate locatability.

    Locatability (METRICS.md §4) is the best NLS of a value against runs of 1
    to ``n + 2`` words (``n`` the value's word count) that do not cross a
    segment; :meth:`closeness` scores runs of ``n - 1`` to ``n + 1`` words,
    built once per length and kept.

    Examples
    --------
    >>> spans = PageSpans([["Nasi", "Goreng", "25,000"], ["TOTAL", "25,000"]])
    >>> spans.closeness("nasi goreng"), spans.closeness("Goreng"), spans.closeness("kopi")
    (1.0, 1.0, 0.25)
    """

    def __init__(self, lines: Sequence[Sequence[str]]) -> None:
        self.lines = [[word.lower() for word in words] for words in lines]
        self._runs: dict[int, list[str]] = {}

    def runs(self, length: int) -> list[str]:
        """Every run of ``length`` words within a line, lower-cased."""
        runs = self._runs.get(length)
        if runs is None:
            runs = [" ".join(words[i:i + length]) for words in self.lines for i in range(len(words) - length + 1)]
            self._runs[length] = runs
        return runs

    def closeness(self, text: str) -> float:
        """The best NLS of ``text`` (normalised) against the runs of about its length."""
        target = normalize(text)
        n = len(target.split())
        best = 0.0
        for length in range(max(1, n - 1), n + 2):
            found = extractOne(target, self.runs(length), scorer=Levenshtein.normalized_similarity,
                               score_cutoff=best)
            if found is not None:
                best = max(best, float(found[1]))
        return best


def least_locatable(make: Callable[[], str], spans: PageSpans, *, reject: Callable[[str], bool], fallback: str,
                    tries: int = 4) -> str:
    """The least locatable of ``tries`` values from ``make``, or ``fallback``.

    A hallucination must not be on the page; values drawn from the page's own
    vocabulary often nearly are, so the least similar of a few candidates is
    kept. Candidates found verbatim on the page, and those ``reject`` refuses
    (e.g. ones that would count as right), never qualify.

    >>> spans = PageSpans([["TOTAL", "25,000"]])
    >>> values = iter(["25,000", "25,500", "7,250"])
    >>> least_locatable(lambda: next(values), spans, reject=lambda v: False, fallback="?", tries=3)
    '7,250'
    """
    best, best_score = fallback, 1.0
    for _ in range(tries):
        candidate = make()
        if reject(candidate):
            continue
        score = spans.closeness(candidate)
        if score < best_score:
            best, best_score = candidate, score
    return best


def anls_right(answers: Sequence[str], prediction: str) -> bool:
    """Whether a prediction is right by ANLS (score at least 0.5, METRICS.md §1, §7).

    >>> anls_right(["1,250"], "1.250"), anls_right(["12"], "l2"), anls_right(["12"], "")
    (True, True, False)
    """
    predicted = normalize(prediction)
    for answer in answers:
        truth = normalize(answer)
        longest = max(len(truth), len(predicted))
        if longest == 0 or 2 * Levenshtein.distance(truth, predicted) <= longest:
            return True
    return False


# --------------------------------------------------------------------------- KIE


@dataclass(slots=True)
class Predicted:
    """One predicted entity before its confidence is drawn.

    ``kind`` is the planned fate (``"correct"`` or an error kind): the
    confidence model draws from it. ``source`` is the ground-truth key whose
    rates produced it, which sets its confidence class.
    """

    key: str
    value: str
    right: bool
    kind: str
    source: str


_FATES = ("correct",) + KIE_KINDS
_LAST_FATE = len(_FATES) - 1


@dataclass(frozen=True)
class KIEPlan:
    """The rates of one field, ready to draw from: cumulative fate weights and the extra rate."""

    totals: list[float]
    extra: float

    @classmethod
    def of(cls, rates: KIEErrorRates, *, extra_possible: bool) -> KIEPlan:
        exclusive = rates.exclusive()
        correct = max(0.0, 1.0 - sum(exclusive.values()))
        return cls(cumulative([correct, *exclusive.values()]), rates.extra if extra_possible else 0.0)


def kie_predictions(groups: Sequence[Sequence[tuple[str, str]]], *, categories: Sequence[str],
                    plans: Mapping[str, KIEPlan], extra_keys: Mapping[str, Sequence[str]], draws: Draws,
                    hallucinate: Callable[[str, str], str]) -> list[list[Predicted]]:
    """Predict every group of a document through the error model.

    Parameters
    ----------
    groups : sequence of sequences of (key, value)
        The ground truth; group 0 holds the non-grouped entities.
    categories : sequence of str
        The category of each group (group 0's is the non-grouped one's, e.g. ``"store"``).
    plans : mapping of str to KIEPlan
        The rates of every key that occurs.
    extra_keys : mapping of str to sequence of str
        Per category, keys an extra entity may take (those the group does not annotate are used).
    draws : Draws
        The record's random numbers.
    hallucinate : callable
        ``hallucinate(key, truth)``: a value for ``key`` that differs from
        ``truth`` and is not on the page.

    Returns
    -------
    list of lists of Predicted
        One list per group, group 0 first.
    """
    values = [(g, key, value) for g, group in enumerate(groups) for key, value in group]
    # two uniforms per entity, fetched at once: its fate and whether an extra entity comes with it
    uniforms = draws.uniforms(2 * len(values))
    predicted: list[list[Predicted]] = [[] for _ in groups]
    at = 0
    for g, group in enumerate(groups):
        out = predicted[g]
        for key, value in group:
            plan = plans[key]
            fate = _FATES[min(bisect_right(plan.totals, uniforms[at] * plan.totals[-1]), _LAST_FATE)]
            if fate == "correct":
                out.append(Predicted(key, value, True, fate, key))
            elif fate == "ocr":
                out.append(Predicted(key, confuse(value, draws), False, fate, key))
            elif fate in ("neighbour", "hallucination"):
                other = _neighbour(values, g, key, value, draws) if fate == "neighbour" else None
                other = other if other is not None else hallucinate(key, value)
                out.append(Predicted(key, other, False, fate, key))
            elif fate == "moved":
                target = _moved_to(g, categories, draws)
                if target is None:  # a lone group: the value still comes out wrong, from the page
                    other = _neighbour(values, g, key, value, draws) or hallucinate(key, value)
                    out.append(Predicted(key, other, False, fate, key))
                else:
                    predicted[target].append(Predicted(key, value, False, fate, key))
            elif fate == "duplicate":
                out.append(Predicted(key, value, True, "correct", key))
                out.append(Predicted(key, value, False, fate, key))
            # "missed" predicts nothing
            if uniforms[at + 1] < plan.extra:
                present = {k for k, _ in group}
                free = [k for k in extra_keys.get(categories[g], ()) if k not in present]
                if free:
                    others = [v for k, v in group if k != key]
                    out.append(Predicted(draws.pick(free), draws.pick(others) if others else value, False,
                                         "extra", key))
            at += 2
    return predicted


def _neighbour(values: Sequence[tuple[int, str, str]], g: int, key: str, value: str, draws: Draws) -> str | None:
    """A value printed elsewhere on the page, nearest in kind and place first.

    Tiers: the same key in an adjacent group; the same class in this or an
    adjacent group; the same class anywhere; any value. Values equal to the
    truth never qualify.
    """
    kind = field_class(key)
    tiers: list[list[str]] = [[], [], [], []]
    for h, other_key, other in values:
        if other == value:
            continue
        near = abs(h - g) <= 1
        if other_key == key and abs(h - g) == 1:
            tiers[0].append(other)
        elif field_class(other_key) == kind:
            tiers[1 if near else 2].append(other)
        else:
            tiers[3].append(other)
    for tier in tiers:
        if tier:
            return draws.pick(tier)
    return None


def _moved_to(g: int, categories: Sequence[str], draws: Draws) -> int | None:
    """An adjacent group, of the same category when there is one; group 0 never receives."""
    adjacent = [h for h in (g - 1, g + 1) if 1 <= h < len(categories) and h != g]
    if g == 0 and len(categories) > 1:
        adjacent = [1]
    same = [h for h in adjacent if categories[h] == categories[g]]
    choices = same or adjacent
    return draws.pick(choices) if choices else None
