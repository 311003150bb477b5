"""The reliability diagram: how often the model is right at each confidence, against the diagonal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.common.formatting import number
from rpa_sim.report.displays.base import SummaryDisplay
from rpa_sim.report.style import PALETTE

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rpa_sim.study.result import StudySummary

__all__ = ["ReliabilityDisplay"]

_XLABEL, _YLABEL = "confidence", "accuracy (share right)"


class ReliabilityDisplay(SummaryDisplay):
    """The share right in each equal-width confidence bin as bars, each bin's mean confidence as a dot, and the
    diagonal of perfect calibration.

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    lower, upper : sequence of float
        Each bin's bounds.
    accuracy : sequence of float
        The share right in each bin.
    mean_confidence : sequence of float
        Each bin's mean confidence.
    ece : float or None
        The expected calibration error over the bins, in the title.

    Attributes
    ----------
    figure_ : Figure
    ax_ : Axes
    """

    def __init__(self, *, lower: Sequence[float], upper: Sequence[float], accuracy: Sequence[float],
                 mean_confidence: Sequence[float], ece: float | None) -> None:
        self.lower, self.upper = np.array(lower), np.array(upper)
        self.accuracy, self.mean_confidence = tuple(accuracy), tuple(mean_confidence)
        self.ece = ece

    @classmethod
    def from_summary(cls, summary: StudySummary) -> ReliabilityDisplay:
        """The reliability table of a study's summary (``calibration.reliability``).

        Parameters
        ----------
        summary : StudySummary
            A run's (``ScenarioResult.summary``), or ``summary.json`` read by
            :func:`~rpa_sim.study.result.read_summary`.

        Returns
        -------
        ReliabilityDisplay

        Raises
        ------
        ValueError
            When the summary has no calibration (no prediction with a confidence).
        """
        calibration = summary.calibration
        if calibration is None:
            raise ValueError("the summary has no calibration: no prediction has a confidence")
        table = calibration.reliability
        return cls(lower=table.lower, upper=table.upper, accuracy=table.accuracy,
                   mean_confidence=table.mean_confidence, ece=calibration.ece_equal_width)

    def plot(self, ax: Axes | None = None) -> ReliabilityDisplay:
        """Draw the display, with its legend.

        Parameters
        ----------
        ax : Axes, optional
            Where to draw; a figure of one panel is made without it.

        Returns
        -------
        ReliabilityDisplay
            ``self``, with ``figure_`` and ``ax_`` set.
        """
        axes = self.panel(ax, f"Reliability (ECE {number(self.ece)})", _XLABEL, _YLABEL)
        axes.bar(self.lower, self.accuracy, width=self.upper - self.lower, align="edge", color=PALETTE[5],
                 edgecolor="white", label="accuracy in the bin")
        axes.plot(self.mean_confidence, self.accuracy, "D", color=PALETTE[3], markeredgecolor="black",
                  label="mean confidence of the bin")
        axes.plot([0, 1], [0, 1], color="black", linestyle="--", linewidth=1, label="perfect calibration")
        axes.set_xlim(0, 1)
        axes.set_ylim(0, 1)
        axes.legend(fontsize=8, loc="upper left")
        return self
