"""The review operation: the queue that a threshold's routed work forms, exact and simulated.

- :mod:`~rpa_sim.operations.erlang`: Erlang C and Erlang A figures, exact (inputs checked by
  :mod:`~rpa_sim.operations.checks`);
- :mod:`~rpa_sim.operations.staffing`: the fewest reviewers meeting targets;
- :mod:`~rpa_sim.operations.settings`: the settings (pydantic models);
- :mod:`~rpa_sim.operations.tasks`: the stream of review tasks;
- :mod:`~rpa_sim.operations.roster`: who is on duty when;
- :mod:`~rpa_sim.operations.simulation`: the discrete-event simulation.

See ``docs/operations.md``.
"""

from rpa_sim.operations.erlang import QueueFigures, erlang_a, erlang_c, queue_figures
from rpa_sim.operations.roster import Roster
from rpa_sim.operations.settings import QueueSettings
from rpa_sim.operations.simulation import QueueRun, QueueSimulation, simulate, simulate_queue
from rpa_sim.operations.staffing import StaffingPlan, required_reviewers
from rpa_sim.operations.tasks import Tasks, generate_tasks

__all__ = ["QueueFigures", "erlang_a", "erlang_c", "queue_figures", "Roster", "QueueSettings", "QueueRun",
           "QueueSimulation", "simulate", "simulate_queue", "StaffingPlan", "required_reviewers", "Tasks",
           "generate_tasks"]
