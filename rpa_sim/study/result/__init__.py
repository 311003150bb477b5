"""A study's result as typed, frozen dataclasses: what ``summary.json`` holds (``docs/summary.md``).

:class:`StudySummary` is the whole result of ``rpa-sim run``: the scenario's
settings, the data, per policy its curve figures and operating points, the
operation, the monitoring and the decision. ``summary.json`` is its
serialisation: :meth:`StudySummary.from_json` reads one (validating every key
and type, naming the key path of the first problem) and
:meth:`StudySummary.to_json` writes it back byte for byte.

A key the summary leaves out when it has nothing to say (``rejected``,
``monte_carlo``, ``operations``, ...) is None here; a key written as null is
None too, and ``docs/summary.md`` says which is which.

The parts, one module each: :mod:`~rpa_sim.study.result.data` (the data, the
baselines, the calibration), :mod:`~rpa_sim.study.result.policies` (per policy
its figures and operating points), :mod:`~rpa_sim.study.result.operations`
(the review team), :mod:`~rpa_sim.study.result.monitoring` (production
monitoring replayed), :mod:`~rpa_sim.study.result.summary` (the whole), and
:mod:`~rpa_sim.study.result.codec`, the JSON reading and writing they share.
"""

from rpa_sim.study.result.codec import FrozenMap, decoded, encoded
from rpa_sim.study.result.data import (
    Baseline,
    Baselines,
    Calibration,
    GroupCalibration,
    KieData,
    Reliability,
    VqaData,
)
from rpa_sim.study.result.monitoring import AuditWidths, FirstDays, MethodCoverage, MonitoredPolicy, Monitoring
from rpa_sim.study.result.operations import (
    Operations,
    OperationsGridRow,
    OperationsPoint,
    OperationsTeam,
    PolicyOperations,
    Simulation,
)
from rpa_sim.study.result.policies import (
    AtThreshold,
    Certification,
    CostByKind,
    CostOptimum,
    MonteCarlo,
    NotCertifiable,
    OperatingPoint,
    OptimizedThresholds,
    PolicyResult,
    SavingsByKind,
)
from rpa_sim.study.result.summary import SCHEMA_VERSION, StudySummary

__all__ = ["SCHEMA_VERSION", "FrozenMap", "StudySummary", "KieData", "VqaData", "Baseline", "Baselines",
           "Reliability", "GroupCalibration", "Calibration", "OperatingPoint", "CostByKind", "SavingsByKind",
           "CostOptimum", "AtThreshold", "Certification", "NotCertifiable", "MonteCarlo", "PolicyResult",
           "OptimizedThresholds", "OperationsTeam", "Simulation", "OperationsPoint", "OperationsGridRow",
           "PolicyOperations", "Operations", "MethodCoverage", "FirstDays", "AuditWidths", "MonitoredPolicy",
           "Monitoring", "encoded", "decoded"]
