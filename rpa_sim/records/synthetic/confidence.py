"""The confidence model of the generators: a confidence per prediction from its fate.

Construction (calibrated by design). A class of predictions (a KIE field, or
one question) has a right share ``p`` known from the error model, and a
concentration ``k``. Let ``a = k p`` and ``b = k (1 - p)``. A right prediction
draws its confidence from ``Beta(a + 1, b)``, a wrong one from
``Beta(a, b + 1)``. The mixture is then ``Beta(a, b)`` and, by Bayes,
``P(right | c) = c``: the confidences are calibrated, whatever ``k``. A lower
``k`` spreads the confidences towards 0 and 1 (sharper, more separating);
money fields get the lowest by default.

Error kinds differ in how confident they look without breaking that:
``Beta(a, b + 1)`` is the mixture ``pi Beta(a + 1, b + 1) + (1 - pi) Beta(a, b + 2)``
with ``pi = a / (a + b + 1)``; a wrong prediction of kind ``j`` takes the upper
component with probability ``h_j``, proportional to the kind's
``plausibility`` (capped at 1) and scaled so that the kinds' average is ``pi``.
An OCR confusion therefore looks as confident as a right value more often
than a hallucination does, and the wrong predictions as a whole keep
``Beta(a, b + 1)``.

Miscalibration is a logistic link on top: ``c' = sigmoid(t logit(c) + s)``
with temperature ``t`` and shift ``s``. ``"calibrated"`` is ``t = 1, s = 0``;
``"over_confident"`` and ``"under_confident"`` have presets (see
:data:`MODE_PRESETS`) that ``temperature`` and ``shift`` override.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, field_validator

from rpa_sim.common.validation import StrictModel
from rpa_sim.records.synthetic._draws import Draws

__all__ = [
    "Mode",
    "MODE_PRESETS",
    "DEFAULT_PLAUSIBILITY",
    "ConfidenceSettings",
    "overlay_confidence",
    "ConfidenceClass",
    "confidence_class",
    "draw_confidences",
]

Mode = Literal["calibrated", "over_confident", "under_confident"]

MODE_PRESETS: dict[str, tuple[float, float]] = {
    "calibrated": (1.0, 0.0),
    "over_confident": (1.5, 1.0),
    "under_confident": (0.6, -0.6),
}
"""``(temperature, shift)`` of each mode."""

DEFAULT_PLAUSIBILITY: dict[str, float] = {
    "ocr": 1.0,
    "duplicate": 1.0,
    "moved": 0.8,
    "extra": 0.7,
    "neighbour": 0.6,
    "wrong_span": 0.6,
    "hallucination": 0.2,
    "missed": 0.05,
}
"""How confident each error kind looks, relatively (1 = as often in the upper component as possible)."""

# Beta parameters must be positive: a class whose right share is 0 or 1 is nudged by this much.
_EDGE = 1e-3
# Confidences are written with 4 decimals, as models usually report them.
_DECIMALS = 4

Positive = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]


class ConfidenceSettings(StrictModel):
    """Settings of the confidence model.

    Attributes
    ----------
    mode : {"calibrated", "over_confident", "under_confident"}
        The calibration of the confidences.
    temperature, shift : float, optional
        The logistic link's parameters; ``None`` takes the mode's preset.
    concentration : dict of str to float
        The Beta concentration ``k`` per class: for receipts a field class
        (``money``, ``count``, ``text``) or a field key, for questions a
        question type. Lower is sharper. Classes not named use
        ``default_concentration``.
    default_concentration : float
        ``k`` of the classes not in ``concentration``.
    plausibility : dict of str to float
        Per error kind, in ``(0, 1]``: see the module's documentation. Kinds
        not named keep their defaults (:data:`DEFAULT_PLAUSIBILITY`).

    Examples
    --------
    >>> settings = ConfidenceSettings(mode="over_confident", shift=0.5)
    >>> settings.link()
    (1.5, 0.5)
    >>> ConfidenceSettings(plausibility={"ocr": 0})
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for ConfidenceSettings
    plausibility
      Value error, plausibility of 'ocr' must be in (0, 1], got 0 ...
    """

    mode: Mode = "over_confident"
    temperature: Positive | None = None
    shift: Annotated[float, Field(allow_inf_nan=False)] | None = None
    concentration: dict[str, Positive] = Field(default_factory=dict)
    default_concentration: Positive = 1.5
    plausibility: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_PLAUSIBILITY))

    @field_validator("plausibility", mode="before")
    @classmethod
    def _merge_plausibility(cls, value: object) -> object:
        if not isinstance(value, Mapping):
            return value
        for kind, weight in value.items():
            if kind not in DEFAULT_PLAUSIBILITY:
                raise ValueError(f"unknown error kind {kind!r}; expected one of {sorted(DEFAULT_PLAUSIBILITY)}")
            if not isinstance(weight, (int, float)) or not 0 < weight <= 1:
                raise ValueError(f"plausibility of {kind!r} must be in (0, 1], got {weight!r}")
        return {**DEFAULT_PLAUSIBILITY, **value}

    def link(self) -> tuple[float, float]:
        """The logistic link's ``(temperature, shift)``: the explicit ones, else the mode's preset."""
        temperature, shift = MODE_PRESETS[self.mode]
        return (temperature if self.temperature is None else self.temperature,
                shift if self.shift is None else self.shift)

    def concentration_of(self, *names: str) -> float:
        """The concentration of the first of ``names`` that is set (e.g. a key, then its class)."""
        for name in names:
            if name in self.concentration:
                return self.concentration[name]
        return self.default_concentration


def overlay_confidence(value: Any, defaults: ConfidenceSettings) -> Any:
    """Lay a user's confidence mapping over a generator's defaults (a ``mode="before"`` validator helper).

    Unnamed settings keep the generator's defaults, and ``concentration``
    entries are merged one by one, so ``{mode: calibrated}`` keeps the
    per-class concentrations. Anything but a mapping is left for pydantic to reject.

    >>> base = ConfidenceSettings(concentration={"money": 1.0})
    >>> overlay_confidence({"mode": "calibrated", "concentration": {"text": 3}}, base)["concentration"]
    {'money': 1.0, 'text': 3}
    """
    if not isinstance(value, Mapping):
        return value
    merged = {**defaults.model_dump(), **value}
    given = value.get("concentration")
    if isinstance(given, Mapping):
        merged["concentration"] = {**defaults.concentration, **given}
    return merged


@dataclass(frozen=True)
class ConfidenceClass:
    """The Beta parameters of one class and the upper-component probability of each wrong kind."""

    a: float
    b: float
    upper: Mapping[str, float]

    def parameters(self, right: bool, kind: str, u: float) -> tuple[float, float]:
        """Beta parameters of one prediction; ``u`` is a uniform number choosing the wrong component."""
        if right:
            return self.a + 1.0, self.b
        if u < self.upper.get(kind, 0.0):
            return self.a + 1.0, self.b + 1.0
        return self.a, self.b + 2.0


def confidence_class(right_share: float, concentration: float, wrong_weights: Mapping[str, float],
                     plausibility: Mapping[str, float]) -> ConfidenceClass:
    """The calibrated confidence class of predictions with a known right share.

    Parameters
    ----------
    right_share : float
        ``p``, the probability that a prediction of the class is right.
    concentration : float
        ``k``.
    wrong_weights : mapping of str to float
        The relative frequency of each error kind among the class's wrong predictions.
    plausibility : mapping of str to float
        Per kind, how often it should take the upper component, relatively.

    Examples
    --------
    >>> c = confidence_class(0.8, 2.0, {"ocr": 0.5, "hallucination": 0.5}, DEFAULT_PLAUSIBILITY)
    >>> round(c.a, 3), round(c.b, 3), {k: round(v, 3) for k, v in c.upper.items()}
    (1.6, 0.4, {'ocr': 0.889, 'hallucination': 0.178})
    >>> round(0.5 * c.upper["ocr"] + 0.5 * c.upper["hallucination"], 4) == round(1.6 / 3.0, 4)  # pi
    True
    """
    p = min(max(right_share, _EDGE), 1.0 - _EDGE)
    a, b = concentration * p, concentration * (1.0 - p)
    pi = a / (a + b + 1.0)
    total = sum(wrong_weights.values())
    if total <= 0:
        return ConfidenceClass(a, b, {})
    weights = {kind: weight / total for kind, weight in wrong_weights.items() if weight > 0}
    return ConfidenceClass(a, b, _upper_shares(weights, plausibility, pi))


def _upper_shares(weights: Mapping[str, float], plausibility: Mapping[str, float], pi: float) -> dict[str, float]:
    """``h_j = min(1, alpha s_j)`` with ``alpha`` such that ``sum_j w_j h_j = pi`` (``pi < 1``).

    The most plausible kinds saturate first: skip over saturated kinds while
    what is left of ``pi`` would push the next one past 1.
    """
    kinds = sorted(weights, key=lambda kind: -plausibility[kind])
    j, saturated = 0, 0.0

    def rest(j: int) -> float:
        return sum(weights[k] * plausibility[k] for k in kinds[j:])

    while j < len(kinds) - 1 and (pi - saturated) * plausibility[kinds[j]] > rest(j):
        saturated += weights[kinds[j]]
        j += 1
    alpha = (pi - saturated) / rest(j)
    return {k: 1.0 if i < j else min(1.0, alpha * plausibility[k]) for i, k in enumerate(kinds)}


def draw_confidences(draws: Draws, items: Sequence[tuple[ConfidenceClass, bool, str]],
                     settings: ConfidenceSettings) -> list[float]:
    """Draw one confidence per ``(class, right, kind)``, with the settings' link, rounded to 4 decimals.

    All Beta draws of a record go to numpy in one call.

    >>> from rpa_sim.records.synthetic._draws import block_rng
    >>> cls = confidence_class(0.9, 1.0, {"ocr": 1.0}, DEFAULT_PLAUSIBILITY)
    >>> values = draw_confidences(Draws(block_rng(0, 0, 0)), [(cls, True, "correct")] * 3, ConfidenceSettings())
    >>> len(values), all(0 <= v <= 1 for v in values)
    (3, True)
    """
    if not items:
        return []
    params = [cls.parameters(right, kind, u) for (cls, right, kind), u in zip(items, draws.uniforms(len(items)))]
    values = draws.rng.beta([a for a, _ in params], [b for _, b in params])
    temperature, shift = settings.link()
    if temperature != 1.0 or shift != 0.0:
        clipped = np.clip(values, 1e-9, 1.0 - 1e-9)
        values = 1.0 / (1.0 + np.exp(-(temperature * np.log(clipped / (1.0 - clipped)) + shift)))
    return [round(value, _DECIMALS) for value in values.tolist()]
