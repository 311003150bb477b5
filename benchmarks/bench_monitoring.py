"""Production monitoring (issue 14): the coverage of each estimator's interval, measured, and what it costs.

Replays many production days of the ``confidence`` policy at τ = 0.9 on
generated receipts (the items fixed, the audits and the reviewer's misses and
false corrections drawn again each day) and prints, per audit design, reviewer
and method, the actual coverage of the nominal 95% interval, its mean width,
the estimates' bias, the coverage of the post-correction quality interval and
the naive figure's bias: the table of ``docs/monitoring.md``. Two designs with
the same expected number of audits: a uniform audit, and the Neyman plan of
``plan-audit`` over 4 confidence bands. Then the plan's expected widths beside
the widths measured, and speed as ratios: estimating against replaying a day.

Usage: ``python benchmarks/bench_monitoring.py [DAYS] [RECEIPTS]`` (defaults 500 days, 2,000 receipts).
"""

from __future__ import annotations

import sys
import time
from functools import partial

from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.operate.monitoring.coverage import coverage_markdown, measure_coverage
from rpa_sim.operate.monitoring.estimators import METHODS, estimate
from rpa_sim.operate.monitoring.planning import plan_audit
from rpa_sim.operate.monitoring.replay import Replayer
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.policies import load_policy
from rpa_sim.route.reviewer import Reviewer

THRESHOLD = 0.9
AUDITS = 400
REVIEWERS = {"perfect": Reviewer(), "m=0.1, f=0.02": Reviewer(miss_rate=0.1, false_correction_rate=0.02)}


def timed(work, repeat: int = 1):
    start = time.perf_counter()
    for _ in range(repeat):
        result = work()
    return result, (time.perf_counter() - start) / repeat


def main() -> None:
    days = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    receipts = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    table = evaluate_kie(generate_receipts(receipts, seed=1))
    policy = load_policy("confidence")
    planned = plan_audit(table, policy, threshold=THRESHOLD, budget=AUDITS, bands=4)
    uniform = Replayer(table, policy, threshold=THRESHOLD, audit=AUDITS / planned.auto_accepted)
    neyman = Replayer(table, policy, threshold=THRESHOLD, audit=planned.audit_plan())
    print(f"{len(table):,} entity predictions in {receipts:,} receipts; policy confidence at τ = {THRESHOLD}: "
          f"{planned.auto_accepted:,} auto-accepted, true error rate {uniform.day(seed=0).auto_error:.4f}; "
          f"{AUDITS} audits a day in expectation; {days} days per reviewer\n")

    start = time.perf_counter()
    print("uniform audit\n")
    uniform_rows = measure_coverage(uniform, days=days, seed=0, reviewers=REVIEWERS)
    print(coverage_markdown(uniform_rows))
    print(f"\nNeyman plan over {len(planned.bands)} confidence bands "
          f"({', '.join(f'{band.band}: {band.audits}' for band in planned.bands)})\n")
    neyman_rows = measure_coverage(neyman, days=days, seed=0, reviewers=REVIEWERS, methods=("stratified", "ppi"))
    print(coverage_markdown(neyman_rows))
    measured_s = time.perf_counter() - start

    widths = {(design, row.method): row.mean_width for design, rows in (("uniform", uniform_rows),
                                                                        ("Neyman", neyman_rows))
              for row in rows if row.reviewer == "perfect"}
    print("\nplanned (at the confidences' prior error rates) and measured widths, perfect reviewer")
    print(f"  plan's normal-theory width, Neyman     {planned.expected_width:.4f}   measured ppi "
          f"{widths['Neyman', 'ppi']:.4f}")
    print(f"  plan's normal-theory width, uniform    {planned.uniform_width:.4f}   measured classical "
          f"{widths['uniform', 'classical']:.4f}, ppi {widths['uniform', 'ppi']:.4f}")
    print(f"  plan's exact stratified width, Neyman  {planned.exact_width:.4f}   measured stratified "
          f"{widths['Neyman', 'stratified']:.4f}")

    log = uniform.day(seed=1, reviewer=REVIEWERS["m=0.1, f=0.02"]).log
    _, replay_s = timed(lambda: uniform.day(seed=1, reviewer=REVIEWERS["m=0.1, f=0.02"]), repeat=50)
    print(f"\nspeed ({len(log):,} rows a day), as multiples of replaying one day ({replay_s * 1000:.2f} ms here)")
    for method in METHODS:
        _, estimate_s = timed(partial(estimate, log, method=method), repeat=50)
        print(f"  estimate, {method:<10}  {estimate_s / replay_s:6.2f}x")
    print(f"  the whole measurement: {4 * days} days in {measured_s:.1f} s, "
          f"{measured_s / (4 * days) / replay_s:.1f}x a replay per day (all its estimates included)")


if __name__ == "__main__":
    main()
