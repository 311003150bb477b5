"""The review operation: the queue that a threshold's routed work forms, exact and simulated.

- :mod:`~rpa_sim.operate.queue.erlang`: Erlang C and Erlang A figures, exact (inputs checked by
  :mod:`~rpa_sim.operate.queue.checks`);
- :mod:`~rpa_sim.operate.queue.staffing`: the fewest reviewers meeting targets;
- :mod:`~rpa_sim.operate.queue.settings`: the settings (pydantic models);
- :mod:`~rpa_sim.operate.queue.tasks`: the stream of review tasks;
- :mod:`~rpa_sim.operate.queue.roster`: who is on duty when;
- :mod:`~rpa_sim.operate.queue.simulation`: the discrete-event simulation.

See ``docs/operations.md``.
"""

from rpa_sim.operate.queue.erlang import QueueFigures, erlang_a, erlang_c, queue_figures
from rpa_sim.operate.queue.roster import Roster
from rpa_sim.operate.queue.settings import QueueSettings
from rpa_sim.operate.queue.simulation import QueueRun, QueueSimulation, simulate, simulate_queue
from rpa_sim.operate.queue.staffing import StaffingPlan, required_reviewers
from rpa_sim.operate.queue.tasks import Tasks, generate_tasks

__all__ = ["QueueFigures", "erlang_a", "erlang_c", "queue_figures", "Roster", "QueueSettings", "QueueRun",
           "QueueSimulation", "simulate", "simulate_queue", "StaffingPlan", "required_reviewers", "Tasks",
           "generate_tasks"]
