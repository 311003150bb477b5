"""SMuDGE before review against its weight alpha, with the scenario's alpha marked (VQA only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.report.displays.base import Display
from rpa_sim.report.style import PALETTE

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rpa_sim.study.run import ScenarioResult

__all__ = ["SmudgeAlphaDisplay"]

_TITLE, _XLABEL, _YLABEL = "SMuDGE against alpha", "alpha (0: grounding only, 1: match only)", "mean SMuDGE"


class SmudgeAlphaDisplay(Display):
    """Mean SMuDGE before review at alpha = 0, 0.05, ..., 1 (0: grounding only, 1: match only), the scenario's
    alpha marked on the curve.

    Build it with :meth:`from_result`, then draw it with :meth:`plot`. It is the one display a summary cannot
    build: it scores the questions again at each alpha, which only the run's outcome table can.

    Parameters
    ----------
    alphas, means : ndarray
        The curve (:func:`rpa_sim.evaluate.metrics.smudge.alpha_curve`).
    alpha : float
        The scenario's alpha, marked.

    Attributes
    ----------
    figure_ : Figure
    ax_ : Axes
    """

    def __init__(self, *, alphas: np.ndarray, means: np.ndarray, alpha: float) -> None:
        self.alphas, self.means, self.alpha = alphas, means, alpha

    @classmethod
    def from_result(cls, result: ScenarioResult) -> SmudgeAlphaDisplay:
        """The alpha curve of a VQA run's questions that have OCR (the others have no grounding).

        Parameters
        ----------
        result : ScenarioResult
            What :func:`rpa_sim.study.run.run_scenario` returned, for questions.

        Returns
        -------
        SmudgeAlphaDisplay

        Raises
        ------
        ValueError
            When the run is not of questions, or no question has OCR.
        """
        table = result.table
        if not table.has_smudge:  # SMuDGE scores questions only
            raise ValueError("SMuDGE scores answers to questions: the run holds KIE documents")
        curve = table.smudge_by_alpha(step=0.05)
        if curve is None:
            raise ValueError("no question has OCR, so no answer has a grounding to weigh")
        alphas, means = curve
        return cls(alphas=alphas, means=means, alpha=result.scenario.alpha)

    def plot(self, ax: Axes | None = None) -> SmudgeAlphaDisplay:
        """Draw the display, with its legend.

        Parameters
        ----------
        ax : Axes, optional
            Where to draw; a figure of one panel is made without it.

        Returns
        -------
        SmudgeAlphaDisplay
            ``self``, with ``figure_`` and ``ax_`` set.
        """
        axes = self.panel(ax, _TITLE, _XLABEL, _YLABEL)
        axes.plot(self.alphas, self.means, marker="o", markersize=3, color=PALETTE[0])
        at = float(np.interp(self.alpha, self.alphas, self.means))
        axes.axvline(self.alpha, color="grey", linestyle="--", linewidth=1)
        axes.scatter([self.alpha], [at], color=PALETTE[3], marker="D", edgecolor="black", zorder=3,
                     label=f"scenario alpha {self.alpha:g}")
        axes.set_xlim(0, 1)
        axes.legend(fontsize=8)
        return self
