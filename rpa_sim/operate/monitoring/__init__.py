"""Production monitoring: what goes straight through, estimated from reviews and audits as a team would.

Once a policy is live only the items a person looks at are checked, and the
reviewed ones are exactly those the model was unsure of. A random audit of
auto-accepted items with known inclusion probabilities, and estimators that
weight by them, give an honest error rate. rpa-sim knows the truth of every
replayed item, so it writes realistic production logs, estimates from them,
and measures whether each interval covers the truth (``docs/monitoring.md``).

One concept per module:

- :mod:`~rpa_sim.operate.monitoring.log`: the production log (one row per prediction
  unit) and its JSON Lines file, written by rpa-sim or exported by a team;
- :mod:`~rpa_sim.operate.monitoring.audit_plan`: the audit plan file (per-stratum audit rates);
- :mod:`~rpa_sim.operate.monitoring.replay`: one concrete production day of a policy;
- :mod:`~rpa_sim.operate.monitoring.reviews`: the review log of records reviewed on a labelling platform;
- :mod:`~rpa_sim.operate.monitoring.estimators`: the error rate of auto-accepted items
  (classical, stratified, PPI++) and the post-correction quality;
- :mod:`~rpa_sim.operate.monitoring.planning`: how many items to audit, and where (Neyman allocation);
- :mod:`~rpa_sim.operate.monitoring.coverage`: the actual coverage of the intervals over many days.
"""
