"""Evidence-box IoU (METRICS.md §5; seed 004, BBox-DocVQA's three cases)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpa_sim.evaluate.metrics.evidence import box_iou, evidence_iou
from rpa_sim.records.models import Evidence
from tests.conftest import shared_path

A = [0, 0, 10, 10]
B = [20, 0, 30, 10]


def test_box_iou_by_hand():
    assert box_iou(A, [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert box_iou(A, A) == 1.0
    assert box_iou(A, [0, 0, 5, 5]) == 0.25
    assert box_iou(A, B) == 0.0
    assert box_iou(A, [10, 0, 20, 10]) == 0.0  # touching edges
    assert box_iou([3, 3, 3, 3], [3, 3, 3, 3]) == 0.0  # no area at all


def test_box_iou_shapes():
    assert box_iou([A, B], [A, B, [5, 0, 15, 10]]).shape == (2, 3)
    np.testing.assert_allclose(box_iou(A, [A, B]), [1.0, 0.0])
    np.testing.assert_allclose(box_iou([A, B], [[25, 0, 35, 10]]), [[0.0], [1 / 3]])


def test_box_iou_rejects_bad_boxes():
    with pytest.raises(ValueError, match=r"got shape \(3,\)"):
        box_iou([0, 0, 1], A)
    with pytest.raises(ValueError, match=r"invalid box .*\[10.0, 0.0, 0.0, 10.0\]"):
        box_iou(A, [10, 0, 0, 10])
    with pytest.raises(ValueError, match="invalid box"):
        box_iou([0, 0, float("nan"), 1], A)


def test_single_page_single_box_is_the_iou():
    assert evidence_iou([Evidence(page=0, bbox=A)], [Evidence(page=0, bbox=[5, 0, 15, 10])]) == pytest.approx(1 / 3)
    # Several predicted boxes: the best one counts.
    assert evidence_iou([(0, A)], [(0, B), (0, [5, 0, 15, 10])]) == pytest.approx(1 / 3)


def test_single_page_several_boxes_averages_each_truth_box_best_iou():
    # A is matched exactly; B's best is [25, 0, 35, 10]: 50 / 150.
    predicted = [(0, A), (0, [25, 0, 35, 10])]
    assert evidence_iou([(0, A), (0, B)], predicted) == pytest.approx((1 + 1 / 3) / 2)
    # One predicted box may serve several ground-truth boxes.
    assert evidence_iou([(0, A), (0, A)], [(0, A)]) == 1.0


def test_several_pages_average_the_pages():
    truth = [(0, A), (1, A), (1, B), (2, A)]
    predicted = [(0, A), (1, [5, 0, 15, 10]), (3, A)]
    # Page 0: 1. Page 1: (1/3 + 0) / 2. Page 2: no predicted box, 0. Page 3 has no ground truth.
    assert evidence_iou(truth, predicted) == pytest.approx((1 + 1 / 6 + 0) / 3)


def test_no_predicted_box_scores_zero():
    assert evidence_iou([(0, A)], None) == 0.0
    assert evidence_iou([(0, A)], []) == 0.0
    assert evidence_iou([(0, A)], [(1, A)]) == 0.0


def test_evidence_iou_rejects_bad_input():
    with pytest.raises(ValueError, match=r"at least one ground-truth box, got \[\]"):
        evidence_iou([], [(0, A)])
    with pytest.raises(ValueError, match="predicted: a page must be an integer >= 0, got -1"):
        evidence_iou([(0, A)], [(-1, A)])
    with pytest.raises(ValueError, match="got '0'"):
        evidence_iou([("0", A)], None)


def test_dude_multi_box_answer():
    rows = json.loads(shared_path("data", "dude", "DUDE_demo_gt.json").read_text(encoding="utf-8"))["data"]
    # "In what year was the marriage certificate signed/stamped?": two boxes on page 0.
    (row,) = [row for row in rows if row["answers"] == ["1894"]]
    truth = [
        Evidence(page=b["page"], bbox=(b["left"], b["top"], b["left"] + b["width"], b["top"] + b["height"]))
        for b in row["answers_page_bounding_boxes"][0]
    ]
    assert len(truth) == 2 and {e.page for e in truth} == {0}
    assert evidence_iou(truth, truth) == 1.0
    assert evidence_iou(truth, truth[:1]) == 0.5  # the two boxes do not overlap
    shifted = [Evidence(page=0, bbox=(e.bbox[0] + 10, e.bbox[1], e.bbox[2] + 10, e.bbox[3])) for e in truth]
    first_width, second_width = (e.bbox[2] - e.bbox[0] for e in truth)
    expected = ((first_width - 10) / (first_width + 10) + (second_width - 10) / (second_width + 10)) / 2
    assert evidence_iou(truth, shifted) == pytest.approx(expected)


coordinate = st.integers(0, 50)
boxes = st.tuples(coordinate, coordinate, st.integers(1, 20), st.integers(1, 20)).map(
    lambda b: (b[0], b[1], b[0] + b[2], b[1] + b[3])
)
evidence = st.lists(st.tuples(st.integers(0, 2), boxes), min_size=1, max_size=5)


@given(truth=evidence, predicted=evidence)
def test_evidence_iou_is_in_unit_interval_and_perfect_on_itself(truth, predicted):
    assert 0.0 <= evidence_iou(truth, predicted) <= 1.0
    assert evidence_iou(truth, truth) == pytest.approx(1.0)


@given(boxes, boxes)
def test_box_iou_is_symmetric(a, b):
    assert box_iou(a, b) == box_iou(b, a)
