"""The result's data part: the predictions' figures before review, the two baselines and the calibration."""

from __future__ import annotations

from dataclasses import dataclass

from rpa_sim.common.typedjson import left_out

__all__ = ["KieData", "VqaData", "Baseline", "Baselines", "Reliability", "GroupCalibration", "Calibration"]


@dataclass(frozen=True)
class KieData:
    """The data of a KIE study: its predictions and corpus KIEval figures before review (``score --json``).

    Counts are of entities (groups for ``groups_*``); ratios are None when undefined.
    """

    predictions: int
    documents: int
    entities_gt: int
    entities_pred: int
    tp: int
    fp: int
    fn: int
    substitutions: int
    additions: int
    deletions: int
    entity_f1: float | None
    group_f1: float | None
    kieval_aligned: float | None
    group_aligned: float | None
    ignored_empty: int
    precision: float | None
    recall: float | None
    grouping_blind_entity_f1: float | None
    groups_gt: int
    groups_pred: int
    groups_paired: int
    groups_tp: int
    value_match: str


@dataclass(frozen=True)
class VqaData:
    """The data of a VQA study: its predictions and corpus figures before review (``score --json``)."""

    predictions: int
    questions: int
    anls: float | None
    accuracy: float | None
    smudge: float | None
    match: float | None
    grounding: float | None
    alpha: float
    evidence_iou: float | None
    absolute_deviation: float | None
    absolute_deviation_compared: int


@dataclass(frozen=True)
class Baseline:
    """Reviewing nothing or everything: the metric after review, the items reviewed, the cost (None without costs)."""

    metric: float | None
    reviewed: float
    cost: float | None


@dataclass(frozen=True)
class Baselines:
    """The two baselines every policy is compared with."""

    review_none: Baseline
    review_all: Baseline


@dataclass(frozen=True)
class Reliability:
    """The reliability diagram: per non-empty equal-width confidence bin, its bounds, size, mean confidence
    and share of right predictions."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    count: tuple[int, ...]
    mean_confidence: tuple[float, ...]
    accuracy: tuple[float, ...]


@dataclass(frozen=True)
class GroupCalibration:
    """The calibration of one field or document type."""

    name: str
    predictions: int
    mean_confidence: float | None
    accuracy: float | None
    ece_equal_width: float | None
    ece_equal_mass: float | None


@dataclass(frozen=True)
class Calibration:
    """How well the confidences match the share of right predictions (the predictions that have one)."""

    ece_equal_width: float | None
    ece_equal_mass: float | None
    aurc: float | None
    reliability: Reliability
    by_field: tuple[GroupCalibration, ...]
    by_document_type: tuple[GroupCalibration, ...] | None = left_out()
    without_confidence: int | None = left_out()
