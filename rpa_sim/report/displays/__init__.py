"""The report's figures as reusable displays, in the manner of scikit-learn's ``RocCurveDisplay``.

Each display is built from what a study saved, or from a run, then drawn::

    summary = read_summary(Path("out/summary.json"))              # rpa_sim.study.result
    curves = read_curves(Path("out/curves.csv"), task=summary.task)  # rpa_sim.route.curvefile
    display = TradeoffDisplay.from_summary(summary, curves)       # what to draw
    display = ReliabilityDisplay.from_summary(summary)            # (the summary alone holds what it draws)
    display = TradeoffDisplay.from_result(result)                 # or from a run, which holds both
    display.plot()                                                # a figure of its own, as the report draws it
    display.plot(ax=axes)                                         # or a panel of a figure of yours

``plot`` returns the display with ``figure_`` and ``ax_`` (``axes_`` when it draws several panels) set; the
base (:mod:`~rpa_sim.report.displays.base`) sets the panels up, the caller's or a new figure's. Given no axes
a display makes the report's figure, with what belongs to the whole figure (a legend under the panels, a title
over them); given axes it draws the panels only. ``from_summary`` and ``from_result`` raise ValueError when
the study has nothing for the display (no costs, no calibration, no monitoring, ...). The SMuDGE alpha figure
is built from a run only: it scores the questions again. Figures are made without pyplot.
"""

from rpa_sim.report.displays.cost import CostDisplay
from rpa_sim.report.displays.decision import DecisionDisplay
from rpa_sim.report.displays.monitoring import MonitoringIntervalsDisplay, MonitoringWidthsDisplay
from rpa_sim.report.displays.operations import (
    OperationsBacklogDisplay,
    OperationsReviewersDisplay,
    OperationsStaffingDisplay,
)
from rpa_sim.report.displays.over_time import OverTimeDisplay
from rpa_sim.report.displays.reliability import ReliabilityDisplay
from rpa_sim.report.displays.signals import SignalsAutomationDisplay, SignalsReliabilityDisplay, SignalsRocDisplay
from rpa_sim.report.displays.smudge import SmudgeAlphaDisplay
from rpa_sim.report.displays.tradeoff import TradeoffDisplay

__all__ = ["DecisionDisplay", "TradeoffDisplay", "CostDisplay", "ReliabilityDisplay", "SmudgeAlphaDisplay",
           "MonitoringIntervalsDisplay", "MonitoringWidthsDisplay", "OperationsReviewersDisplay",
           "OperationsStaffingDisplay", "OperationsBacklogDisplay", "SignalsRocDisplay", "SignalsReliabilityDisplay",
           "SignalsAutomationDisplay", "OverTimeDisplay"]
