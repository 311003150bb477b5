"""The reviewers a threshold needs and the queue over the day (the summary's ``operations``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.report.displays.base import SummaryDisplay
from rpa_sim.report.style import amounts, label, style

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rpa_sim.study.result import OperationAt, Operations, PolicyOperations, StudySummary

__all__ = ["OperationsReviewersDisplay", "OperationsStaffingDisplay", "OperationsBacklogDisplay"]

_HOURS = np.arange(25)


def _operations(summary: StudySummary) -> Operations:
    operations = summary.operations
    if operations is None:
        raise ValueError("the study has no operations: add an operations section to the scenario")
    return operations


def _first_points(operations: Operations) -> list[tuple[int, PolicyOperations, OperationAt]]:
    """Each policy (with its place, which gives its style) and its first operating point, when it has one."""
    return [(index, entry, entry.points[0]) for index, entry in enumerate(operations.policies) if entry.points]


def _with_first_points(summary: StudySummary) -> Operations:
    operations = _operations(summary)
    if not _first_points(operations):
        raise ValueError("no policy has an operating point to staff: set targets or costs")
    return operations


class OperationsReviewersDisplay(SummaryDisplay):
    """Per policy over a grid of thresholds: above, the reviewers to schedule at the busiest hour (dotted: the
    team); below, the share of documents the team does in time, simulated (dotted: the target).

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    operations : Operations
        The summary's operation.

    Attributes
    ----------
    figure_ : Figure
    axes_ : list of Axes
        The two panels, reviewers above, service level below.
    """

    def __init__(self, *, operations: Operations) -> None:
        self.operations = operations

    @classmethod
    def from_summary(cls, summary: StudySummary) -> OperationsReviewersDisplay:
        """The operation of a study with an ``operations`` section.

        Raises
        ------
        ValueError
            When the study has no operations.
        """
        return cls(operations=_operations(summary))

    def plot(self, ax: Sequence[Axes] | None = None) -> OperationsReviewersDisplay:
        """Draw the display, with a legend in each panel.

        Parameters
        ----------
        ax : pair of Axes, optional
            The reviewers' panel and the service level's; made (stacked, sharing τ) without them.

        Returns
        -------
        OperationsReviewersDisplay
            ``self``, with ``figure_`` and ``axes_`` set.
        """
        top, bottom = self.panels(ax, 2, 1, size=(7.5, 6.4), sharex=True)[:, 0]
        operations = self.operations
        label(top, "Reviewers to schedule at the busiest hour, against τ", "", "reviewers")
        label(bottom, "Share of documents done in time with the team (simulated)", "threshold τ", "service level")
        amounts(top.yaxis)
        for index, entry in enumerate(operations.policies):
            line_style = style(index)
            tau = [row.threshold for row in entry.grid]
            top.step(tau, [row.peak_scheduled_needed for row in entry.grid], where="mid", label=entry.policy,
                     color=line_style["color"], linestyle=line_style["linestyle"])
            bottom.plot(tau, [row.simulated.service_level for row in entry.grid], label=entry.policy,
                        markersize=3, **line_style)
        team = max(operations.team.scheduled_per_hour)
        top.axhline(team, color="black", linestyle=":", linewidth=1, label=f"the team ({team} at most)")
        bottom.axhline(operations.settings.service_level.share, color="black", linestyle=":", linewidth=1,
                       label="target")
        bottom.set_ylim(-0.02, 1.02)
        top.legend(fontsize=8, loc="upper left")
        bottom.legend(fontsize=8, loc="lower left")
        self.axes_: list[Axes] = [top, bottom]
        return self


class OperationsStaffingDisplay(SummaryDisplay):
    """The reviewers to schedule in each hour of the day at each policy's first operating point, beside the team
    as planned (dotted); a week's profile is shown as its mean day.

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    operations : Operations
        The summary's operation, with at least one operating point.

    Attributes
    ----------
    figure_ : Figure
    ax_ : Axes
    """

    def __init__(self, *, operations: Operations) -> None:
        self.operations = operations

    @classmethod
    def from_summary(cls, summary: StudySummary) -> OperationsStaffingDisplay:
        """The operation of a study with an ``operations`` section.

        Raises
        ------
        ValueError
            When the study has no operations, or no policy has an operating point.
        """
        return cls(operations=_with_first_points(summary))

    def plot(self, ax: Axes | None = None) -> OperationsStaffingDisplay:
        """Draw the display, with its legend.

        Parameters
        ----------
        ax : Axes, optional
            Where to draw; a figure of one panel is made without it.

        Returns
        -------
        OperationsStaffingDisplay
            ``self``, with ``figure_`` and ``ax_`` set.
        """
        axes = self.panel(ax, "Reviewers to schedule in each hour (first operating point)", "hour of the day",
                          "reviewers")
        amounts(axes.yaxis)
        axes.stairs(self.operations.team.scheduled_per_hour, _HOURS, color="black", linestyle=":", linewidth=1.5,
                    label="the team")
        for index, entry, point in _first_points(self.operations):
            line_style = style(index)
            hours = point.scheduled_needed_per_hour
            if len(hours) > 24:  # a week's profile: its mean day
                hours = np.asarray(hours, dtype=np.float64).reshape(7, 24).mean(axis=0).tolist()
            axes.stairs(hours, _HOURS, color=line_style["color"], linestyle=line_style["linestyle"],
                        label=f"{entry.policy} at τ {point.threshold:.3f} ({point.point})")
        axes.set_xlim(0, 24)
        axes.set_xticks(range(0, 25, 3))
        axes.legend(fontsize=8, loc="upper left")
        return self


class OperationsBacklogDisplay(SummaryDisplay):
    """The documents waiting or in review at the end of each hour, the mean over the simulated days with the team
    as planned, at each policy's first operating point; the arrivals an hour as grey bars on a second axis.

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    operations : Operations
        The summary's operation, with at least one operating point.

    Attributes
    ----------
    figure_ : Figure
    ax_ : Axes
        The backlog's panel.
    arrivals_ax_ : Axes
        Its twin, for the arrivals.
    """

    def __init__(self, *, operations: Operations) -> None:
        self.operations = operations

    @classmethod
    def from_summary(cls, summary: StudySummary) -> OperationsBacklogDisplay:
        """The operation of a study with an ``operations`` section.

        Raises
        ------
        ValueError
            When the study has no operations, or no policy has an operating point.
        """
        return cls(operations=_with_first_points(summary))

    def plot(self, ax: Axes | None = None) -> OperationsBacklogDisplay:
        """Draw the display, with its legend.

        Parameters
        ----------
        ax : Axes, optional
            Where to draw the backlog (the arrivals go on its twin); a figure of one panel is made without it.

        Returns
        -------
        OperationsBacklogDisplay
            ``self``, with ``figure_``, ``ax_`` and ``arrivals_ax_`` set.
        """
        operations = self.operations
        axes = self.panel(ax, f"Documents waiting or in review, mean over {operations.days} simulated days",
                          "hour of the day (end of)", "documents")
        arrivals = axes.twinx()
        arrivals.bar(np.arange(24) + 0.5, np.asarray(operations.arrivals_per_hour[:24]), width=0.9, color="0.85",
                     zorder=0)
        arrivals.set_ylabel("arrivals an hour (grey bars)")
        amounts(axes.yaxis)
        amounts(arrivals.yaxis)
        axes.set_zorder(arrivals.get_zorder() + 1)
        axes.patch.set_visible(False)
        for index, entry, point in _first_points(operations):
            backlog = point.simulated.backlog_by_hour  # simulated at every operating point
            if backlog is not None:
                axes.plot(np.arange(1, 25), backlog, markersize=3, label=f"{entry.policy} at τ {point.threshold:.3f}",
                          **style(index))
        axes.set_xlim(0, 24)
        axes.set_xticks(range(0, 25, 3))
        axes.legend(fontsize=8, loc="upper left")
        self.arrivals_ax_: Axes = arrivals
        return self
