"""The live loop: a team's production logs over days, per segment, with a guarantee over every day (``docs/live.md``).

``rpa-sim watch`` follows the error rate of what goes straight through, per
segment (document type, source, field), day by day, and says when a decision
no longer holds, with the chance of a false alarm over all days and segments
bounded, and what to do about it. One concept per module:

- :mod:`~rpa_sim.operate.live.tally`: what a segment's rows of a day, or of a run of days, add up to;
- :mod:`~rpa_sim.operate.live.reader`: the day reader (LOGS as files, in day order, streamed);
- :mod:`~rpa_sim.operate.live.detector`: the e-detector (day factors, Shiryaev-Roberts, the lower bound);
- :mod:`~rpa_sim.operate.live.calibration`: the label-free tier and its own detector;
- :mod:`~rpa_sim.operate.live.proposals`: the threshold a window supports, the audit that would settle it;
- :mod:`~rpa_sim.operate.live.watch`: the engine, day after day, per segment;
- :mod:`~rpa_sim.operate.live.result`: the typed result a study, the report and the dashboard render;
- :mod:`~rpa_sim.operate.live.state`: the state file that carries a run to the next day.
"""
