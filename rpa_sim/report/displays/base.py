"""The base of the report's figures: how a display is built, and the panels it draws on.

Every display is built from what a study saved, then drawn, in the manner of scikit-learn's displays::

    display = ReliabilityDisplay.from_summary(summary)            # summary.json, read by read_summary
    display = TradeoffDisplay.from_summary(summary, curves)       # ... and its curves (curves.csv, read_curves)
    display = TradeoffDisplay.from_result(result)                 # or a run, which holds both
    display.plot()                                                # a figure of its own, as the report draws it
    display.plot(ax=axes)                                         # or panels of a figure of yours

:class:`Display` owns the panels' set-up: the caller's axes, or a new figure of the report's size, and the
``figure_`` and ``ax_`` (or ``axes_``) a drawn display carries. :class:`SummaryDisplay` is a display of the
summary alone; :class:`CurvesDisplay` also draws the sweep's curves, which ``summary.json`` does not hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from matplotlib.figure import Figure, SubFigure

from rpa_sim.report.style import label

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rpa_sim.route.sweep import Curve
    from rpa_sim.study.result import PolicyResult, StudySummary
    from rpa_sim.study.run import ScenarioResult

__all__ = ["Display", "SummaryDisplay", "CurvesDisplay", "policies_curves", "figure_of", "PANEL_INCHES"]

#: A figure of one panel, in inches, before :func:`~rpa_sim.report.style.fit_to_phone` narrows it.
PANEL_INCHES = (7.5, 4.8)

_SummaryDisplay = TypeVar("_SummaryDisplay", bound="SummaryDisplay")
_CurvesDisplay = TypeVar("_CurvesDisplay", bound="CurvesDisplay")


class Display:
    """A figure of the report: :meth:`plot` draws it on the panels :meth:`panel` or :meth:`panels` set up.

    Attributes
    ----------
    figure_ : Figure
        The figure drawn in, once drawn.
    ax_ : Axes
        The panel, for a display of one panel.
    axes_
        The panels, for a display of several (each display says in which shape).
    """

    figure_: Figure
    ax_: Axes
    zoom_ax_: Axes | None

    def panel(self, ax: Axes | None, title: str, xlabel: str, ylabel: str) -> Axes:
        """The one panel to draw on, labelled (:func:`~rpa_sim.report.style.label`): ``ax``, or the panel of a new
        figure of :data:`PANEL_INCHES`; ``figure_`` and ``ax_`` are set."""
        if ax is None:
            self.figure_ = Figure(figsize=PANEL_INCHES, layout="constrained")
            ax = self.figure_.subplots()
        else:
            self.figure_ = figure_of(ax)
        label(ax, title, xlabel, ylabel)
        self.ax_ = ax
        return ax

    def panels(self, ax: Axes | Sequence[Axes] | np.ndarray | None, rows: int, columns: int, *,
               size: tuple[float, float], **sharing: Any) -> np.ndarray:
        """The ``rows`` x ``columns`` panels to draw on, of shape (rows, columns): ``ax`` (an Axes, or any sequence
        of that many in row order), or those of a new figure of ``size`` inches (``sharing``:
        :meth:`Figure.subplots`' ``sharex``, ``sharey``); ``figure_`` is set."""
        if ax is None:
            self.figure_ = Figure(figsize=size, layout="constrained")
            return self.figure_.subplots(rows, columns, squeeze=False, **sharing)
        grid = np.asarray(ax, dtype=object).reshape(rows, columns)
        self.figure_ = figure_of(grid[0, 0])
        return grid

    def zoom_panels(self, ax: Axes | None, zoom_ax: Axes | None, *, zoomable: bool, why_not: str) -> list[Axes]:
        """The panels of a display with a zoom: the caller's (``ax``, and ``zoom_ax`` when given), or a new
        figure of the full panel and, when the display has a range to zoom on (``zoomable``), the zoom panel
        below it; ``figure_``, ``ax_`` and ``zoom_ax_`` are set.

        Raises
        ------
        ValueError
            When ``zoom_ax`` comes without ``ax``, or when it is given and the display cannot zoom (``why_not``).
        """
        if ax is None:
            if zoom_ax is not None:
                raise ValueError("zoom_ax needs ax: give both panels, or neither to make a figure")
            self.figure_ = Figure(figsize=(7.5, 9.6 if zoomable else 5.6), layout="constrained")
            panels = list(self.figure_.subplots(2 if zoomable else 1, 1, squeeze=False)[:, 0])
        else:
            if zoom_ax is not None and not zoomable:
                raise ValueError(f"zoom_ax needs a zoom window: the display has none ({why_not})")
            self.figure_ = figure_of(ax)
            panels = [ax] if zoom_ax is None else [ax, zoom_ax]
        self.ax_ = panels[0]
        self.zoom_ax_ = panels[1] if len(panels) == 2 else None
        return panels


class SummaryDisplay(Display):
    """A display of what ``summary.json`` holds: built by :meth:`from_summary`."""

    @classmethod
    def from_summary(cls: type[_SummaryDisplay], summary: StudySummary) -> _SummaryDisplay:
        """The display of a study's summary (:class:`~rpa_sim.study.result.StudySummary`: a run's, or one read
        from ``summary.json`` by :func:`~rpa_sim.study.result.read_summary`).

        Raises
        ------
        ValueError
            When the summary has nothing for the display (no calibration, no monitoring, no operations, ...).
        """
        raise NotImplementedError

    @classmethod
    def from_result(cls: type[_SummaryDisplay], result: ScenarioResult) -> _SummaryDisplay:
        """The display of a scenario run (what :func:`rpa_sim.study.run.run_scenario` returns): its summary's."""
        return cls.from_summary(result.summary)


class CurvesDisplay(Display):
    """A display of the sweep's curves with what the summary says of them: built by :meth:`from_summary` with the
    curves (a run's, or those of ``curves.csv`` read by :func:`~rpa_sim.route.curvefile.read_curves`)."""

    @classmethod
    def from_summary(cls: type[_CurvesDisplay], summary: StudySummary, curves: Sequence[Curve]) -> _CurvesDisplay:
        """The display of a study's summary and its policies' curves, one per policy in the summary's order.

        Parameters
        ----------
        summary : StudySummary
            A run's (``ScenarioResult.summary``), or ``summary.json`` read by
            :func:`~rpa_sim.study.result.read_summary`.
        curves : sequence of Curve
            The policies' curves on the scenario's grid, in the summary's order: a run's, or ``curves.csv`` read by
            :func:`~rpa_sim.route.curvefile.read_curves`.

        Raises
        ------
        ValueError
            When the summary has nothing for the display (no costs, ...), or the curves are not the policies'.
        """
        raise NotImplementedError

    @classmethod
    def from_result(cls: type[_CurvesDisplay], result: ScenarioResult) -> _CurvesDisplay:
        """The display of a scenario run (what :func:`rpa_sim.study.run.run_scenario` returns): its summary and
        curves."""
        return cls.from_summary(result.summary, result.curves)


def policies_curves(summary: StudySummary, curves: Sequence[Curve]) -> list[tuple[PolicyResult, Curve]]:
    """Each policy of the summary with its curve, checked to be the policy's (same name, same order).

    Raises
    ------
    ValueError
        When the curves are not one per policy of the summary, in its order.
    """
    names = [policy.policy for policy in summary.policies]
    if [curve.policy for curve in curves] != names:
        raise ValueError(f"expected a curve per policy of the summary ({', '.join(names)}), got "
                         f"{', '.join(curve.policy for curve in curves) or 'none'}")
    return list(zip(summary.policies, curves))


def figure_of(axes: Axes) -> Figure:
    """The figure ``axes`` are drawn in (the whole figure when they sit in a subfigure).

    Raises
    ------
    ValueError
        When the axes belong to no figure.
    """
    figure = axes.get_figure()
    while isinstance(figure, SubFigure):
        figure = figure.get_figure()
    if figure is None:
        raise ValueError("the axes belong to no figure: make them with Figure.subplots or pyplot.subplots")
    return figure
