"""The report's figures as reusable displays, in the manner of scikit-learn's ``RocCurveDisplay``.

Each display is built from a scenario run, then drawn::

    display = TradeoffDisplay.from_result(result)   # what to draw, read from the run's summary and curves
    display.plot()                                  # a figure of its own, as the report draws it
    display.plot(ax=axes)                           # or a panel of a figure of yours

``plot`` returns the display with ``figure_`` and ``ax_`` (``axes_`` when it draws several panels) set.
Given no axes it makes the report's figure, with what belongs to the whole figure (a legend under the panels,
a title over them); given axes it draws the panels only. ``from_result`` raises ValueError when the run has
nothing for the display (no costs, no calibration, no monitoring, ...). Figures are made without pyplot.
"""

from rpa_sim.report.displays.cost import CostDisplay
from rpa_sim.report.displays.decision import DecisionDisplay
from rpa_sim.report.displays.monitoring import MonitoringIntervalsDisplay, MonitoringWidthsDisplay
from rpa_sim.report.displays.operations import (
    OperationsBacklogDisplay,
    OperationsReviewersDisplay,
    OperationsStaffingDisplay,
)
from rpa_sim.report.displays.reliability import ReliabilityDisplay
from rpa_sim.report.displays.smudge import SmudgeAlphaDisplay
from rpa_sim.report.displays.tradeoff import TradeoffDisplay

__all__ = ["DecisionDisplay", "TradeoffDisplay", "CostDisplay", "ReliabilityDisplay", "SmudgeAlphaDisplay",
           "MonitoringIntervalsDisplay", "MonitoringWidthsDisplay", "OperationsReviewersDisplay",
           "OperationsStaffingDisplay", "OperationsBacklogDisplay"]
