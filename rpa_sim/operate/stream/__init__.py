"""Streams to study the live loop on: a scenario's data as days of production logs under named changes.

``rpa-sim replay SCENARIO --days N --out-dir DIR`` writes them, one log a day;
``rpa-sim run`` on a scenario with a ``stream:`` section watches them
(:mod:`rpa_sim.operate.live`) and says, per change, when it happened and when it
was caught (``docs/live.md``, "Streams to study it on"). One concept per module:

- :mod:`~rpa_sim.operate.stream.spec`: the ``stream:`` section;
- :mod:`~rpa_sim.operate.stream.plan`: who is drawn (the documents, their types and sources), what each change
  does to whom from which day, and the figures it plants;
- :mod:`~rpa_sim.operate.stream.generator`: the days, drawn;
- :mod:`~rpa_sim.operate.stream.watched`: the stream watched, and each change's detection.
"""
