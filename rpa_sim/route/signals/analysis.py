"""What each confidence signal is worth for routing: its ranking, its calibration, the automation it certifies.

A signal is a score in ``[0, 1]`` per value (NaN where a value lacks it), read
as "the higher, the likelier right". :func:`summarise_signal` measures one;
:func:`analyse_signals` measures several and their fused signal
(:mod:`rpa_sim.route.signals.fusion`) on the same footing. Ranking and
calibration are measured on the values that carry the signal; the certified
automation on every value, a value without the signal being reviewed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rpa_sim.common.progress import stage
from rpa_sim.evaluate.metrics.calibration import ReliabilityTable, reliability_table
from rpa_sim.route.certify import CertifiedThreshold, certify_threshold
from rpa_sim.route.signals.columns import FUSED, signal_columns
from rpa_sim.route.signals.discrimination import Discrimination, discrimination, roc_points
from rpa_sim.route.signals.fusion import FOLDS, FusionModel, cross_fit
from rpa_sim.route.signals.verdicts import BINS, in_words, verdicts

__all__ = ["Certification", "SignalSummary", "SignalsAnalysis", "brier_score", "certified_automation",
           "automation_of", "summarise_signal", "analyse_signals"]

@dataclass(frozen=True)
class Certification:
    """How a signal is certified: ``rpa-sim certify``'s settings (``docs/calibration.md``)."""

    max_error: float
    delta: float
    calibration_fraction: float = 0.5
    seed: int = 0


@dataclass(frozen=True, eq=False)
class SignalSummary:
    """One signal measured for routing.

    Attributes
    ----------
    name : str
    values, carried : int
        The values, and those that carry this signal.
    discrimination : Discrimination
        The AUROC for telling errors from correct values, with its DeLong 95% interval.
    reliability : ReliabilityTable or None
        :data:`~rpa_sim.route.signals.verdicts.BINS` equal-width bins (None when no value carries the signal).
    brier : float
        Mean squared gap between the signal and 1 (right) or 0 (wrong); NaN when no value carries it.
    certified : CertifiedThreshold or None
        The Learn-then-Test threshold at (max_error, delta); None when not asked.
    verdicts : tuple of str
        Those of :data:`~rpa_sim.route.signals.verdicts.VERDICTS` that apply.
    roc : tuple of two ndarrays
        :func:`~rpa_sim.route.signals.discrimination.roc_points`: errors and correct values auto-accepted.
    cost : float or None
        What the signal costs per value; None when it is not priced.
    """

    name: str
    values: int
    carried: int
    discrimination: Discrimination
    reliability: ReliabilityTable | None
    brier: float
    certified: CertifiedThreshold | None
    verdicts: tuple[str, ...]
    roc: tuple[np.ndarray, np.ndarray] = field(repr=False)
    cost: float | None = None

    @property
    def ece(self) -> float:
        """The expected calibration error over the reliability table's bins (NaN when no value carries it)."""
        return math.nan if self.reliability is None else self.reliability.ece

    @property
    def automation(self) -> float | None:
        """The certified automation (:func:`automation_of`); None when certification was not asked."""
        return None if self.certified is None else automation_of(self.certified)

    @property
    def words(self) -> str:
        """The verdicts in words (:func:`~rpa_sim.route.signals.verdicts.in_words`), and whether certification
        found a threshold."""
        text = in_words(self.discrimination, self.reliability, self.verdicts)
        if self.certified is not None and self.certified.threshold is None:
            text += " No threshold of it is certified at these max_error and delta."
        return text

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain Python values, None for NaN (``rpa-sim signals --format json``'s rows)."""
        found = self.discrimination
        certified = self.certified
        return {"signal": self.name, "values": self.values, "carried": self.carried,
                "auroc": _number(found.auroc), "auroc_low": _number(found.low), "auroc_high": _number(found.high),
                "ece": _number(self.ece), "brier": _number(self.brier),
                "threshold": None if certified is None else certified.threshold,
                "certified_automation": self.automation, "cost": self.cost,
                "verdicts": list(self.verdicts), "words": self.words}


@dataclass(frozen=True, eq=False)
class SignalsAnalysis:
    """Every signal measured, then the fused one (when there are two signals or more).

    Attributes
    ----------
    summaries : tuple of SignalSummary
        The signals in the order given, then :data:`FUSED`.
    fusion : FusionModel or None
        The folds' fusion models averaged, to show what the fused signal leans
        on; None without a fused signal.
    certification : Certification or None
    """

    summaries: tuple[SignalSummary, ...]
    fusion: FusionModel | None
    certification: Certification | None

    def __getitem__(self, name: str) -> SignalSummary:
        for summary in self.summaries:
            if summary.name == name:
                return summary
        raise KeyError(name)

    def best(self) -> SignalSummary | None:
        """The single signal (not the fused one) with the highest certified automation, then AUROC; None without
        certification."""
        singles = [s for s in self.summaries if s.name != FUSED and s.automation is not None]
        return max(singles, key=lambda s: (s.automation, _number(s.discrimination.auroc) or 0.0), default=None)


def brier_score(signal: ArrayLike, error: ArrayLike) -> float:
    """The mean of ``(signal - right)^2``, right being 1 for a correct value and 0 for an error; lower is better.

    >>> brier_score([0.9, 0.2], [False, True])
    0.025
    """
    score = np.asarray(signal, dtype=np.float64)
    right = ~np.asarray(error, dtype=bool)
    return float(np.mean((score - right) ** 2)) if len(score) else math.nan


def certified_automation(signal: ArrayLike, error: ArrayLike, certification: Certification, *,
                         groups: ArrayLike | None = None, name: str = "the signal") -> CertifiedThreshold:
    """The Learn-then-Test threshold of routing on ``signal`` (auto-accept iff ``signal >= threshold``).

    Exactly ``rpa-sim certify`` with the signal as the confidence
    (:func:`~rpa_sim.route.certify.certify_threshold`, same split, same
    candidates). A value without the signal (NaN) is never auto-accepted: it
    is certified as ``certify --policy`` certifies a policy that reviews
    values without a confidence (scored 0, candidates above 0). ``name`` names the signal in the guarantee.

    Examples
    --------
    >>> found = certified_automation([0.99] * 40 + [0.5] * 10 + [np.nan] * 5, [False] * 40 + [True] * 15,
    ...                              Certification(max_error=0.1, delta=0.1, calibration_fraction=1.0))
    >>> found.threshold, found.accepted_n, automation_of(found)
    (0.99, 40, 0.7272727272727273)
    >>> found.guarantee.split(".")[0]
    'Auto-accept iff the signal >= 0'
    """
    values = np.asarray(signal, dtype=np.float64)
    missing = np.isnan(values)
    settings: dict[str, Any] = {"max_error": certification.max_error, "delta": certification.delta,
                                "calibration_fraction": certification.calibration_fraction,
                                "seed": certification.seed, "groups": groups, "score": name}
    if not missing.any():
        return certify_threshold(values, error, **settings)
    candidates = np.unique(values[~missing])
    return certify_threshold(np.where(missing, 0.0, values), error, candidates=candidates[candidates > 0], **settings)


def automation_of(certified: CertifiedThreshold) -> float:
    """The certified automation: the share of held-out values auto-accepted at the certified threshold (0 when
    nothing is certified); with no held-out values (calibration fraction 1), the calibration share.

    >>> automation_of(certify_threshold([0.9] * 30, [False] * 30, max_error=0.1, delta=0.1, calibration_fraction=1.0))
    1.0
    """
    if certified.holdout_auto_rate is not None:
        return certified.holdout_auto_rate
    return certified.accepted_n / certified.calibration_n if certified.calibration_n else 0.0


def summarise_signal(name: str, signal: ArrayLike, error: ArrayLike, *, certification: Certification | None = None,
                     groups: ArrayLike | None = None, cost: float | None = None) -> SignalSummary:
    """Measure one signal: AUROC with its interval, reliability, ECE, Brier, verdicts, certified automation.

    Parameters
    ----------
    name : str
    signal : array-like of float, shape (n,)
        In ``[0, 1]``, NaN where a value lacks it.
    error : array-like of bool, shape (n,)
        Whether each value is an error (``docs/errors.md``).
    certification : Certification, optional
        Certify a threshold (``rpa-sim certify``'s procedure); none without it.
    groups : array-like of int, shape (n,), optional
        The document of each value (kept together by the calibration split).
    cost : float, optional
        What the signal costs per value (None: not priced).

    Examples
    --------
    >>> summary = summarise_signal("agreement", [1.0, 0.8, 0.8, 0.2, 0.4, np.nan], [0, 0, 1, 1, 1, 0])
    >>> summary.carried, summary.discrimination.auroc, summary.verdicts
    (5, 0.9166666666666667, ('miscalibrated',))
    """
    score = np.asarray(signal, dtype=np.float64)
    wrong = np.asarray(error, dtype=bool)
    carried = ~np.isnan(score)
    known, known_wrong = score[carried], wrong[carried]
    found = discrimination(known, known_wrong)
    reliability = reliability_table(known, ~known_wrong, n_bins=BINS) if len(known) else None
    certified = None if certification is None else certified_automation(score, wrong, certification, groups=groups,
                                                                         name=name)
    return SignalSummary(name=name, values=len(score), carried=int(carried.sum()), discrimination=found,
                         reliability=reliability, brier=brier_score(known, known_wrong), certified=certified,
                         verdicts=verdicts(found, reliability), roc=roc_points(known, known_wrong), cost=cost)


def analyse_signals(signals: Mapping[str, ArrayLike], error: ArrayLike, *, certification: Certification | None = None,
                    groups: ArrayLike | None = None, costs: Mapping[str, float] | None = None,
                    folds: int = FOLDS, fuse: bool = True) -> SignalsAnalysis:
    """Measure every signal, then (with two or more, and ``fuse``) their cross-fitted fused signal.

    Parameters
    ----------
    signals : mapping of str to array-like of float
        Each signal's column (one value per row, NaN where missing), by name.
    error, certification, groups
        As :func:`summarise_signal`.
    costs : mapping of str to float, optional
        Cost per value of the signals priced; the fused signal costs the sum
        of all (None unless every signal is priced).
    folds : int, default=5
        Cross-fitting folds of documents; the seed is the certification's (0 without).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> wrong = rng.random(600) < 0.2
    >>> noise = rng.random(600)
    >>> useful = np.clip(np.where(wrong, 0.3, 0.8) + rng.normal(0, 0.15, 600), 0, 1)
    >>> found = analyse_signals({"noise": noise, "useful": useful}, wrong, groups=np.arange(600) // 3)
    >>> [(s.name, "undiscriminating" in s.verdicts) for s in found.summaries]
    [('noise', True), ('useful', False), ('fused', False)]
    """
    columns = signal_columns(signals)
    wrong = np.asarray(error, dtype=bool)
    priced = {name: float(cost) for name, cost in (costs or {}).items()}
    summaries = []
    with stage("measuring signals", total=len(columns) + (len(columns) > 1 and fuse)) as advance:
        for name, column in columns.items():
            summaries.append(summarise_signal(name, column, wrong, certification=certification, groups=groups,
                                              cost=priced.get(name)))
            advance(1)
        fusion = None
        if fuse and len(columns) > 1:
            seed = 0 if certification is None else certification.seed
            fitted = cross_fit(columns, wrong, groups=groups, folds=folds, seed=seed)
            if fitted.model is not None:
                every = None if set(columns) - set(priced) else sum(priced[name] for name in columns)
                summaries.append(summarise_signal(FUSED, fitted.scores, wrong, certification=certification,
                                                  groups=groups, cost=every))
                fusion = fitted.model
            advance(1)
    return SignalsAnalysis(summaries=tuple(summaries), fusion=fusion, certification=certification)


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)
