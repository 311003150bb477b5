"""Evidence-box IoU for document VQA (METRICS.md §5; seed 004, BBox-DocVQA).

The decisions taken where the paper and the spec are silent are listed in
``docs/metrics/evidence.md``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["box_iou", "evidence_iou"]

if TYPE_CHECKING:
    from rpa_sim.records.models import Evidence

    EvidenceLike = Evidence | tuple[int, Sequence[float]]


def box_iou(a: ArrayLike, b: ArrayLike) -> float | np.ndarray:
    """Intersection over union of ``[x0, y0, x1, y1]`` boxes, every box of ``a`` with every box of ``b``.

    Boxes that only touch, and boxes whose union has no area, have IoU 0.
    Any finite coordinates work, up to ±1.7e308: IoU does not change when
    both boxes are scaled alike, so each pair is first scaled by a power of
    two (exact in binary) that brings its coordinates into [-1, 1], where no
    width, area or sum overflows.

    Parameters
    ----------
    a : array-like of shape (4,) or (n, 4)
    b : array-like of shape (4,) or (m, 4)

    Returns
    -------
    float or ndarray
        A float for two single boxes; otherwise an array of shape
        ``a.shape[:-1] + b.shape[:-1]`` (``(n, m)`` for two arrays of boxes).

    Examples
    --------
    >>> box_iou([0, 0, 10, 10], [5, 0, 15, 10])
    0.3333333333333333
    >>> box_iou([[0, 0, 10, 10], [0, 0, 5, 5]], [0, 0, 10, 10]).tolist()
    [1.0, 0.25]
    >>> box_iou([-1e308, -1e308, 1e308, 1e308], [0, 0, 1e308, 1e308])
    0.25
    """
    first, second = _boxes(a, "a"), _boxes(b, "b")
    left, right = first.reshape(-1, 1, 4), second.reshape(1, -1, 4)
    _, exponent = np.frexp(np.maximum(np.abs(left).max(axis=-1), np.abs(right).max(axis=-1)))
    left, right = np.ldexp(left, -exponent[..., None]), np.ldexp(right, -exponent[..., None])
    width = np.minimum(left[..., 2], right[..., 2]) - np.maximum(left[..., 0], right[..., 0])
    height = np.minimum(left[..., 3], right[..., 3]) - np.maximum(left[..., 1], right[..., 1])
    intersection = np.clip(width, 0, None) * np.clip(height, 0, None)
    # the intersection is at most the smaller area, also once rounded: the union is never below the larger one
    # (and a box inside another gets its exact IoU)
    areas = _area(left), _area(right)
    union = np.maximum(*areas) + (np.minimum(*areas) - intersection)
    iou = np.divide(intersection, union, out=np.zeros_like(union), where=union > 0)
    iou = iou.reshape(first.shape[:-1] + second.shape[:-1])
    return float(iou) if iou.ndim == 0 else iou


def _boxes(value: ArrayLike, name: str) -> np.ndarray:
    boxes = np.asarray(value, dtype=np.float64)
    if boxes.ndim not in (1, 2) or boxes.shape[-1] != 4:
        raise ValueError(f"{name} must be one [x0, y0, x1, y1] box or an (n, 4) array of them, got shape {boxes.shape}")
    flat = boxes.reshape(-1, 4)
    bad = ~np.isfinite(flat).all(axis=1) | (flat[:, 2] < flat[:, 0]) | (flat[:, 3] < flat[:, 1])
    if bad.any():
        raise ValueError(f"{name} has an invalid box (need finite x0 <= x1, y0 <= y1): {flat[bad][0].tolist()}")
    return boxes


def _area(boxes: np.ndarray) -> np.ndarray:
    return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])


def evidence_iou(ground_truth: Sequence[EvidenceLike], predicted: Sequence[EvidenceLike] | None) -> float:
    """Evidence IoU of one question, by BBox-DocVQA's three cases.

    On each page that has ground-truth boxes, every ground-truth box takes its
    best IoU with any predicted box on that page and the page scores the mean
    of those; the question scores the mean over those pages. With one page and
    one box this is the plain IoU (the best over the predicted boxes when
    several are given). A page without any predicted box scores 0; predicted
    boxes on pages without ground truth are not counted.

    Parameters
    ----------
    ground_truth : sequence of Evidence or (page, bbox)
        The ground-truth evidence boxes (at least one).
    predicted : sequence of Evidence or (page, bbox), or None
        The predicted evidence boxes; None or empty scores 0.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> truth = [(0, [0, 0, 10, 10]), (0, [20, 0, 30, 10]), (1, [0, 0, 10, 10])]
    >>> evidence_iou(truth, [(0, [0, 0, 10, 10]), (1, [0, 0, 10, 10])])  # ((1 + 0) / 2 + 1) / 2
    0.75
    >>> evidence_iou(truth, None)
    0.0
    """
    truth = _by_page(ground_truth, "ground_truth")
    if not truth:
        raise ValueError(f"evidence_iou needs at least one ground-truth box, got {list(ground_truth)!r}")
    guesses = _by_page(predicted or (), "predicted")
    scores = [
        float(np.asarray(box_iou(boxes, guesses[page])).max(axis=1).mean()) if page in guesses else 0.0
        for page, boxes in truth.items()
    ]
    return float(np.mean(scores))


def _by_page(items: Sequence[EvidenceLike], name: str) -> dict[int, list[Sequence[float]]]:
    pages: defaultdict[int, list[Sequence[float]]] = defaultdict(list)
    for item in items:
        page, box = item if isinstance(item, (tuple, list)) else (item.page, item.bbox)
        if isinstance(page, bool) or not isinstance(page, (int, np.integer)) or page < 0:
            raise ValueError(f"{name}: a page must be an integer >= 0, got {page!r}")
        pages[int(page)].append(box)
    return dict(pages)
