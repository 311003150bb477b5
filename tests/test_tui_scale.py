"""τ's scale: steps ten times finer from 0.9, which takes half the slider."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.tui.scale import FINE_FROM, LinearScale, ThresholdScale


def _walk(scale, start, direction, coarse=False):
    seen, value = [start], start
    while True:
        value = scale.step(value, direction, coarse=coarse)
        if value == seen[-1]:
            return seen
        seen.append(value)


def test_the_fine_ladder_has_90_steps_below_0_9_and_100_above():
    scale = ThresholdScale()
    up = _walk(scale, 0.0, 1)
    assert len(up) == 191 and up[90] == FINE_FROM and up[-1] == 1.0
    assert np.allclose(np.diff(up[:91]), 0.01) and np.allclose(np.diff(up[90:]), 0.001)
    assert _walk(scale, 1.0, -1) == up[::-1]
    coarse = _walk(scale, 0.0, 1, coarse=True)
    assert len(coarse) == 39 and coarse[18] == FINE_FROM
    assert np.allclose(np.diff(coarse[:19]), 0.05) and np.allclose(np.diff(coarse[18:]), 0.005)


def test_a_threshold_off_the_ladder_steps_onto_it():
    scale = ThresholdScale()
    assert (scale.step(0.8755000000000001, 1), scale.step(0.8755000000000001, -1)) == (0.88, 0.87)
    assert (scale.step(0.9967, 1), scale.step(0.9967, -1)) == (0.997, 0.996)
    assert (scale.step(0.9967, 1, coarse=True), scale.step(0.9967, -1, coarse=True)) == (1.0, 0.995)
    assert (scale.step_size(0.5), scale.step_size(0.9), scale.step_size(0.95, coarse=True)) == (0.01, 0.001, 0.005)


def test_positions_give_0_9_to_1_half_the_bar_and_round_trip():
    scale = ThresholdScale()
    assert [scale.position(t) for t in (0.0, 0.45, 0.9, 0.95, 1.0)] == [0.0, 0.25, 0.5, 0.75, 1.0]
    for value in _walk(scale, 0.0, 1):
        assert scale.value_at(scale.position(value)) == value
    assert scale.ticks == (0.5,)


def test_linear_scale():
    alpha = LinearScale(step=0.05)
    assert _walk(alpha, 0.0, 1)[-1] == 1.0 and len(_walk(alpha, 0.0, 1)) == 21
    assert alpha.value_at(0.26) == 0.25 and alpha.position(0.25) == 0.25 and alpha.ticks == ()
    with pytest.raises(ValueError, match=r"minimum < maximum and step > 0, got 1.0, 0.0, 0.1"):
        LinearScale(minimum=1.0, maximum=0.0, step=0.1)
