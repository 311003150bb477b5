"""Synthetic LLM confidence signals: several scores per predicted value, each with a planted property.

An LLM extractor gives more than one score per value, and they differ in what
they are worth (``docs/generators.md`` states each and how its AUROC follows):

``degenerate`` (default name ``logprob``)
    a token log-probability ``exp(-L)``: ``L`` is exponential, with a mean that
    puts ``top_share`` of the right values in the top bin and an error's mean
    ``wrong_ratio`` times larger. AUROC = ``wrong_ratio / (1 + wrong_ratio)``.
``coarse`` (``verbalized``)
    a verbalized confidence with four levels: a latent normal score (mean
    ``separation`` for right values, 0 for errors, spread 1) cut at ``cuts``.
``agreement`` (``agreement``)
    the share of ``k`` further draws of the extractor that give the same
    value. A draw repeats a right value when its fate (drawn from the field's
    own error rates) is right; it repeats a wrong value of kind ``j`` with
    probability ``repeat[j]`` (an OCR misreading comes back, a hallucination
    rarely does). The informativeness follows from the error model.
``redundant`` (``agreement_copy``)
    a noisy copy of another signal ``of``: it plus normal noise, cut to [0, 1].
``complementary`` (``ocr``)
    informative only on errors of the ``kinds`` that the agreement repeats
    most (OCR misreadings: the OCR engine's own confidence sees them, a further
    draw reading the same page does not): a latent normal score, mean
    ``separation`` for right values and for other errors, 0 for errors of those
    kinds. AUROC = ``share * Phi(separation / sqrt 2) + (1 - share) / 2``.

Values are rounded to 4 decimals, as confidences are. The signals are drawn
from a random stream of their own, so asking for them changes nothing else in
a record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, TypeAdapter, ValidationError, field_validator, model_validator
from scipy.special import ndtr

from rpa_sim.common.validation import StrictModel
from rpa_sim.records.signal_names import check_signal_names

__all__ = ["DEFAULT_REPEAT", "DEFAULT_NAMES", "SIGNAL_KINDS", "SignalSpec", "DegenerateSignal", "CoarseSignal",
           "AgreementSignal", "RedundantSignal", "ComplementarySignal", "parse_signal_spec", "signal_specs",
           "check_signal_specs", "SignalItem", "draw_signals"]

Share = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]

#: How often a further draw of the extractor repeats a wrong value of each error kind: a misreading of the page
#: (ocr) comes back half the time, a neighbouring cell, a value put in another group, written twice or added
#: less often, a hallucination rarely.
DEFAULT_REPEAT: dict[str, float] = {"ocr": 0.5, "neighbour": 0.3, "moved": 0.3, "duplicate": 0.3, "extra": 0.3,
                                    "hallucination": 0.02}
#: The name each kind takes when ``--signals`` names the kind alone.
DEFAULT_NAMES: dict[str, str] = {"degenerate": "logprob", "coarse": "verbalized", "agreement": "agreement",
                                 "redundant": "agreement_copy", "complementary": "ocr"}
SIGNAL_KINDS = tuple(DEFAULT_NAMES)
_DECIMALS = 4


class _Signal(StrictModel):
    name: str

    @field_validator("name")
    @classmethod
    def _allowed_name(cls, value: str) -> str:
        check_signal_names([value])  # the records' rule
        return value


class DegenerateSignal(_Signal):
    """A token log-probability piled up in the top bin, ranking errors near chance."""

    kind: Literal["degenerate"] = "degenerate"
    top_share: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.9
    """Share of right values at or above 14/15 (the top of 15 equal bins)."""
    wrong_ratio: Positive = 1.1
    """How many times larger an error's mean ``L`` is than a right value's."""


class CoarseSignal(_Signal):
    """A verbalized confidence in four levels."""

    kind: Literal["coarse"] = "coarse"
    levels: Annotated[list[Share], Field(min_length=4, max_length=4)] = Field(
        default_factory=lambda: [0.6, 0.8, 0.9, 0.95])
    """The four values said, lowest first."""
    cuts: Annotated[list[Annotated[float, Field(allow_inf_nan=False)]], Field(min_length=3, max_length=3)] = Field(
        default_factory=lambda: [0.0, 0.75, 1.5])
    """Where the latent score moves up a level, increasing."""
    separation: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 1.0
    """The latent mean of right values (errors: 0; spread 1 for both)."""

    @model_validator(mode="after")
    def _increasing(self) -> CoarseSignal:
        for name in ("levels", "cuts"):
            values = getattr(self, name)
            if any(b <= a for a, b in pairwise(values)):
                raise ValueError(f"{name} must be increasing, got {values!r}")
        return self


class AgreementSignal(_Signal):
    """The share of ``k`` further draws of the extractor that agree with the value."""

    kind: Literal["agreement"] = "agreement"
    k: Annotated[int, Field(ge=1, le=100)] = 5
    repeat: dict[str, Share] = Field(default_factory=lambda: dict(DEFAULT_REPEAT))
    """Per error kind, the chance that a further draw repeats the wrong value (kinds not named keep the
    defaults)."""

    @field_validator("repeat", mode="before")
    @classmethod
    def _overlay(cls, value: Any) -> Any:
        return {**DEFAULT_REPEAT, **value} if isinstance(value, dict) else value

    @field_validator("repeat")
    @classmethod
    def _known_kinds(cls, value: dict[str, float]) -> dict[str, float]:
        return _known(value)


class RedundantSignal(_Signal):
    """A noisy copy of another signal."""

    kind: Literal["redundant"] = "redundant"
    of: str = "agreement"
    """The signal copied (listed before this one)."""
    noise: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 0.05
    """The standard deviation of the normal noise added."""


class ComplementarySignal(_Signal):
    """Informative on the errors the agreement repeats, blind to the others."""

    kind: Literal["complementary"] = "complementary"
    kinds: list[str] = Field(default_factory=lambda: ["ocr"])
    """The error kinds it sees (default: OCR misreadings, which the agreement repeats most)."""
    separation: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 2.0
    """The latent mean of right values and unseen errors (seen errors: 0; spread 1)."""

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, value: list[str]) -> list[str]:
        _known(dict.fromkeys(value, 0.0))
        return value


def _known(kinds: dict[str, float]) -> dict[str, float]:
    unknown = sorted(set(kinds) - set(DEFAULT_REPEAT))
    if unknown:
        raise ValueError(f"unknown error kind {unknown[0]!r}; expected one of {sorted(DEFAULT_REPEAT)}")
    return kinds


SignalSpec = Annotated[DegenerateSignal | CoarseSignal | AgreementSignal | RedundantSignal | ComplementarySignal,
                       Field(discriminator="kind")]


_SPECS: TypeAdapter[list[Any]] = TypeAdapter(list[SignalSpec])


def check_signal_specs(specs: list[Any]) -> list[Any]:
    """Names unique, and a redundant signal's original listed before it.

    >>> check_signal_specs([RedundantSignal(name="copy", of="agreement")])
    Traceback (most recent call last):
    ...
    ValueError: signal 'copy' copies 'agreement', which is not listed before it
    """
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise ValueError(f"two signals are named {spec.name!r}")
        if isinstance(spec, RedundantSignal) and spec.of not in seen:
            raise ValueError(f"signal {spec.name!r} copies {spec.of!r}, which is not listed before it")
        seen.add(spec.name)
    return specs


def parse_signal_spec(text: str) -> list[dict[str, str]]:
    """``--signals SPEC``: a comma list of kinds, each ``kind`` or ``name=kind``; ``llm`` is all five.

    >>> parse_signal_spec("agreement,second=coarse")
    [{'kind': 'agreement', 'name': 'agreement'}, {'kind': 'coarse', 'name': 'second'}]
    >>> [spec["name"] for spec in parse_signal_spec("llm")]
    ['logprob', 'verbalized', 'agreement', 'agreement_copy', 'ocr']
    >>> parse_signal_spec("agreement,magic")
    Traceback (most recent call last):
    ...
    ValueError: unknown signal kind 'magic'; expected degenerate, coarse, agreement, redundant, complementary or llm
    """
    specs = []
    for part in text.split(","):
        name, _, kind = part.strip().rpartition("=")
        if kind == "llm" and not name:
            specs += [{"kind": each, "name": DEFAULT_NAMES[each]} for each in SIGNAL_KINDS]
            continue
        if kind not in DEFAULT_NAMES:
            raise ValueError(f"unknown signal kind {kind!r}; expected {', '.join(SIGNAL_KINDS)} or llm")
        specs.append({"kind": kind, "name": name.strip() or DEFAULT_NAMES[kind]})
    return specs


def signal_specs(text: str) -> list[Any]:
    """``--signals SPEC`` as validated signal settings, each with its kind's defaults.

    >>> [(spec.name, spec.kind) for spec in signal_specs("agreement,copy=redundant")]
    [('agreement', 'agreement'), ('copy', 'redundant')]
    >>> signal_specs("copy=redundant")
    Traceback (most recent call last):
    ...
    ValueError: signal 'copy' copies 'agreement', which is not listed before it
    """
    try:
        specs = _SPECS.validate_python(parse_signal_spec(text))
    except ValidationError as problem:
        first = problem.errors()[0]
        raise ValueError(f"{first['msg'].removeprefix('Value error, ')} (at {text!r})") from None
    return check_signal_specs(specs)


#: One predicted value as the signals see it: the chance that a further draw of its field is right, whether
#: the value is right, and its error kind ("correct" when right).
SignalItem = tuple[float, bool, str]


def draw_signals(rng: np.random.Generator, items: Sequence[SignalItem], specs: Sequence[Any]) -> list[dict[str, float]]:
    """One ``{name: value}`` per item, every spec's values drawn for all items at once, in the specs' order.

    >>> from rpa_sim.records.synthetic._draws import block_rng
    >>> drawn = draw_signals(block_rng(0, 9, 0), [(0.9, True, "correct"), (0.9, False, "ocr")],
    ...                      [AgreementSignal(name="agreement"), CoarseSignal(name="verbalized")])
    >>> sorted(drawn[0]), all(0 <= v <= 1 for row in drawn for v in row.values())
    (['agreement', 'verbalized'], True)
    """
    n = len(items)
    if not n or not specs:
        return [{} for _ in range(n)]
    redraw_right = np.array([item[0] for item in items])
    right = np.array([item[1] for item in items])
    kinds = [item[2] for item in items]
    columns: dict[str, np.ndarray] = {}
    for spec in specs:
        columns[spec.name] = np.round(_DRAWS[spec.kind](spec, rng, right, kinds, redraw_right, columns), _DECIMALS)
    names = list(columns)
    rows = np.column_stack([columns[name] for name in names]).tolist()
    return [dict(zip(names, row)) for row in rows]


def _degenerate(spec: DegenerateSignal, rng: np.random.Generator, right: np.ndarray, *_: Any) -> np.ndarray:
    # P(exp(-L) >= 14/15) = top_share for a right value: its mean L is log(15/14) / -log(1 - top_share)
    mean = np.log(15 / 14) / -np.log1p(-spec.top_share)
    return np.exp(-rng.exponential(np.where(right, mean, mean * spec.wrong_ratio)))


def _coarse(spec: CoarseSignal, rng: np.random.Generator, right: np.ndarray, *_: Any) -> np.ndarray:
    latent = rng.normal(np.where(right, spec.separation, 0.0), 1.0)
    return np.asarray(spec.levels)[np.searchsorted(spec.cuts, latent, side="right")]


def _agreement(spec: AgreementSignal, rng: np.random.Generator, right: np.ndarray, kinds: list[str],
               redraw_right: np.ndarray, _: Any) -> np.ndarray:
    repeats = np.array([spec.repeat.get(kind, 0.0) for kind in kinds])
    return rng.binomial(spec.k, np.where(right, redraw_right, repeats)) / spec.k


def _redundant(spec: RedundantSignal, rng: np.random.Generator, right: np.ndarray, kinds: list[str],
               redraw_right: np.ndarray, columns: dict[str, np.ndarray]) -> np.ndarray:
    original = columns[spec.of]
    return np.clip(original + rng.normal(0.0, spec.noise, len(original)), 0.0, 1.0)


def _complementary(spec: ComplementarySignal, rng: np.random.Generator, right: np.ndarray, kinds: list[str],
                   *_: Any) -> np.ndarray:
    seen = np.array([not is_right and kind in spec.kinds for is_right, kind in zip(right, kinds)], dtype=bool)
    latent = rng.normal(np.where(seen, 0.0, spec.separation), 1.0)
    return np.asarray(ndtr(latent - spec.separation / 2))


_DRAWS: dict[str, Callable[..., np.ndarray]] = {"degenerate": _degenerate, "coarse": _coarse,
                                                 "agreement": _agreement, "redundant": _redundant,
                                                 "complementary": _complementary}
