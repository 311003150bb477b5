"""Every figure of a run's report, by name: each drawn by its display (:mod:`rpa_sim.report.displays`), then
fitted to a phone's width (:func:`rpa_sim.report.style.fit_to_phone`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.report.displays import (
    CostDisplay,
    DecisionDisplay,
    MonitoringIntervalsDisplay,
    MonitoringWidthsDisplay,
    OperationsBacklogDisplay,
    OperationsReviewersDisplay,
    OperationsStaffingDisplay,
    OverTimeDisplay,
    ReliabilityDisplay,
    SignalsAutomationDisplay,
    SignalsReliabilityDisplay,
    SignalsRocDisplay,
    SmudgeAlphaDisplay,
    TradeoffDisplay,
)
from rpa_sim.report.displays.monitoring import monitored_policies
from rpa_sim.report.style import fit_to_phone
from rpa_sim.study.result import VqaData

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.study.run import ScenarioResult

__all__ = ["PLOT_NAMES", "report_figures"]

#: Every plot a report can hold, in the order of the report: its id and PNG file stem.
PLOT_NAMES = ("decision", "tradeoff", "cost", "calibration", "signals-roc", "signals-reliability",
              "signals-automation", "smudge-alpha", "monitoring-intervals", "monitoring-widths",
              "operations-reviewers", "operations-staffing", "operations-backlog", "over-time")


def report_figures(result: ScenarioResult) -> dict[str, Figure]:
    """Every plot of the report by name (:data:`PLOT_NAMES`), in the report's order.

    The decision and trade-off plots only with predictions, the cost plot only with costs, the calibration plot
    only with a calibration (predictions with a confidence), the signals' plots only when values carry named
    signals (their automation only with a certification), the alpha plot only for questions with OCR, the
    monitoring and operations plots only with the scenario's sections of those names, the over-time plot only with
    a stream.

    Parameters
    ----------
    result : ScenarioResult
        What :func:`rpa_sim.study.run.run_scenario` returned.

    Returns
    -------
    dict of str to Figure
    """
    summary = result.summary
    figures = {}
    if summary.data.predictions:
        figures["decision"] = DecisionDisplay.from_result(result).plot().figure_
        figures["tradeoff"] = TradeoffDisplay.from_result(result).plot().figure_
    if summary.costs is not None:
        figures["cost"] = CostDisplay.from_result(result).plot().figure_
    if summary.calibration is not None:
        figures["calibration"] = ReliabilityDisplay.from_result(result).plot().figure_
    if summary.signals is not None:
        figures["signals-roc"] = SignalsRocDisplay.from_result(result).plot().figure_
        figures["signals-reliability"] = SignalsReliabilityDisplay.from_result(result).plot().figure_
        if summary.signals.max_error is not None:
            figures["signals-automation"] = SignalsAutomationDisplay.from_result(result).plot().figure_
    if isinstance(summary.data, VqaData) and summary.data.smudge is not None:  # some question has OCR
        figures["smudge-alpha"] = SmudgeAlphaDisplay.from_result(result).plot().figure_
    monitored = monitored_policies(summary)
    if monitored:
        figures["monitoring-intervals"] = MonitoringIntervalsDisplay.from_result(result).plot().figure_
        if any(entry.widths is not None for _, entry in monitored):
            figures["monitoring-widths"] = MonitoringWidthsDisplay.from_result(result).plot().figure_
    operations = summary.operations
    if operations is not None:
        figures["operations-reviewers"] = OperationsReviewersDisplay.from_result(result).plot().figure_
        if any(entry.points for entry in operations.policies):
            figures["operations-staffing"] = OperationsStaffingDisplay.from_result(result).plot().figure_
            figures["operations-backlog"] = OperationsBacklogDisplay.from_result(result).plot().figure_
    if summary.stream is not None and summary.stream.watch.segments:
        figures["over-time"] = OverTimeDisplay.from_result(result).plot().figure_
    for figure in figures.values():
        fit_to_phone(figure)
    return figures
