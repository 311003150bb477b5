"""A study's result as typed, frozen dataclasses: what ``summary.json`` holds (``docs/summary.md``).

:class:`StudySummary` is the whole result of ``rpa-sim run``: the scenario's
settings, the data, per policy its curve figures and operating points, the
operation, the monitoring and the decision. Each stage returns its own typed
results and the study (:func:`rpa_sim.study.run.run_study`) composes them; the
summary holds them as they are:

- the sweep's :class:`~rpa_sim.route.compare.OperatingPoint`, the cost split
  :class:`~rpa_sim.route.costs.CostSplit`, the certification
  :class:`~rpa_sim.route.certify.CertifiedThreshold`, the signals
  :class:`~rpa_sim.route.signals.results.SignalsResult` (stage 2, ``route``);
- the operation :class:`~rpa_sim.operate.queue.results.Operations` with its
  :class:`~rpa_sim.operate.queue.results.Team` and the monitoring
  :class:`~rpa_sim.operate.monitoring.results.Monitoring` (stage 3, ``operate``);
- the :class:`~rpa_sim.study.decision.Decision`.

What the study adds, one module each: :mod:`~rpa_sim.study.result.data` (the
data, the baselines, the calibration), :mod:`~rpa_sim.study.result.policies`
(per policy what it composes of the sweep's figures),
:mod:`~rpa_sim.study.result.summary` (the whole, its schema version and its
JSON) and :mod:`~rpa_sim.study.result.codec` (reading and writing
``summary.json`` files). This package re-exports the stages' types it holds,
so that a reader of summaries finds every part here.

``summary.json`` is the summary encoded by :mod:`rpa_sim.common.typedjson`:
:meth:`StudySummary.from_json` reads one (validating every key and type,
naming the key path of the first problem) and :meth:`StudySummary.to_json`
writes it back byte for byte. A key the summary leaves out when it has nothing
to say (``rejected``, ``monte_carlo``, ``operations``, ...) is None here; a key
written as null is None too, and ``docs/summary.md`` says which is which.
"""

from rpa_sim.common.typedjson import FrozenMap
from rpa_sim.operate.monitoring.results import AuditWidths, FirstDays, MethodCoverage, MonitoredPolicy, Monitoring
from rpa_sim.operate.queue.results import OperationAt, Operations, PolicyOperations, Simulation, Team
from rpa_sim.route.certify import AtThreshold, CertifiedThreshold, NotCertifiable
from rpa_sim.route.compare import OperatingPoint
from rpa_sim.route.costs import CostSplit
from rpa_sim.route.signals.results import SignalFigures, SignalReliability, SignalsResult
from rpa_sim.study.decision import Alternative, Constraint, Decision, Point
from rpa_sim.study.result.codec import read_summary, summary_bytes
from rpa_sim.study.result.data import (
    Baseline,
    Baselines,
    Calibration,
    GroupCalibration,
    KieData,
    Reliability,
    VqaData,
)
from rpa_sim.study.result.policies import CostOptimum, MonteCarlo, OptimizedThresholds, PolicyResult
from rpa_sim.study.result.summary import SCHEMA_VERSION, StudySummary

__all__ = ["SCHEMA_VERSION", "FrozenMap", "StudySummary", "KieData", "VqaData", "Baseline", "Baselines",
           "Reliability", "GroupCalibration", "Calibration", "OperatingPoint", "CostSplit", "CostOptimum",
           "AtThreshold", "CertifiedThreshold", "NotCertifiable", "MonteCarlo", "PolicyResult", "OptimizedThresholds",
           "Team", "Simulation", "OperationAt", "PolicyOperations", "Operations", "MethodCoverage", "FirstDays",
           "AuditWidths", "MonitoredPolicy", "Monitoring", "Decision", "Constraint", "Alternative", "Point",
           "SignalsResult", "SignalFigures", "SignalReliability", "read_summary", "summary_bytes"]
