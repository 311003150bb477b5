"""The live loop (issue 28): detection delays, false alarms, and the speed and memory of ``rpa-sim watch``.

1. Detection: seeded streams of 4 segments audited 50 times a day at EPS = 0.03 and the default horizon
   (365 days); from day 31 one segment's error rate jumps from 0.02 to 0.08, or to 0.06. Per setting, the
   share of streams whose alarm on that segment comes within 12 (0.08) or 25 (0.06) days, the day of the
   jump being day 1; the median and 90th percentile of the delay; alarms on the unchanged segments. The
   same streams through the windowed binomial baseline in the same run: a one-sided exact binomial test
   over each of four trailing windows (7, 14, 28 and 56 days) every day, Bonferroni over 365 days, the
   four windows and the segments.
2. False alarms: the share of no-change streams with any alarm, 365 days, with every segment's rate at
   EPS (binomial audits), or its realised rate exactly EPS every day (the design-based null), for the
   detector and the baseline.
3. The label-free tier: on streams whose errors follow the confidences (a calibrated model, 300 units a
   segment a day, reviewed under 0.9, audited at 0.25), the share whose fitted calibration is ever
   contradicted within 180 days (a false contradiction: the fit's own error shows there), and, with a
   confidently wrong template from day 31 (errors x 4 at the same confidences), the days to
   ``calibration_contradicted`` and to ``error_above_target`` (EPS 0.05), through the full watcher.
4. Speed and memory: ``rpa-sim watch`` over 365 days x 10 segments x 300 units a day (about 1.1 M rows),
   against ``json.loads`` over the same lines timed in the same run; the peak resident memory of the
   watch process.

Usage: ``python benchmarks/bench_live.py [STREAMS] [--no-speed]`` (default 500 streams per setting).
"""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

from rpa_sim.operate.live.detector import first_alarms
from rpa_sim.operate.live.tally import Tally
from rpa_sim.operate.live.watch import Watcher, WatchSettings

EPS, DELTA, HORIZON, AUDITS, SEGMENTS, CHANGE = 0.03, 0.05, 365, 50, 4, 31
WINDOWS = (7, 14, 28, 56)


def draws(streams: int, days: int, rate_of_day, seed: int, *, realised: bool = False) -> tuple[np.ndarray, ...]:
    """Audits and errors per stream, segment and day: binomial audits, or exactly EPS of 1,000 rows wrong."""
    rng = np.random.default_rng(seed)
    if realised:
        audited = rng.binomial(1000, AUDITS / 1000, size=(streams, SEGMENTS, days))
        errors = rng.hypergeometric(round(1000 * EPS), 1000 - round(1000 * EPS), audited)
        return audited, errors
    rates = np.stack([rate_of_day(t) for t in range(1, days + 1)], axis=-1)  # (segments, days)
    errors = rng.binomial(AUDITS, rates, size=(streams, SEGMENTS, days))
    return np.full_like(errors, AUDITS), errors


def detector(audited: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """The first alarm day of each stream and segment (0: none), by the detector's own code."""
    return first_alarms(audited, errors, max_error=EPS, delta=DELTA, horizon=HORIZON)


def windowed(audited: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """The first alarm day of the windowed binomial test with Bonferroni (0: none)."""
    level = DELTA / (365 * len(WINDOWS) * audited.shape[1])
    total_n = np.cumsum(audited, axis=-1)
    total_k = np.cumsum(errors, axis=-1)
    first = np.zeros(errors.shape[:2], dtype=np.int64)
    for window in WINDOWS:
        n = total_n - np.concatenate([np.zeros_like(total_n[..., :window]), total_n[..., :-window]], axis=-1)
        k = total_k - np.concatenate([np.zeros_like(total_k[..., :window]), total_k[..., :-window]], axis=-1)
        alarm = binom.sf(k - 1, n, EPS) <= level
        day = np.where(alarm.any(axis=-1), alarm.argmax(axis=-1) + 1, 0)
        first = np.where((first == 0) | ((day > 0) & (day < first)), np.where(day > 0, day, first), first)
    return first


def detection(streams: int) -> None:
    print(f"## Detection: {streams} streams per setting, {SEGMENTS} segments, {AUDITS} audits a segment a day, "
          f"EPS {EPS}, horizon {HORIZON}, jump on day {CHANGE} (day 1 of the change)\n")
    print("| jump | method | within target days | median delay | 90th percentile | false alarm before the jump "
          "| alarm on an unchanged segment |\n|---|---|---|---|---|---|---|")
    for after, target in ((0.08, 12), (0.06, 25)):
        def rate(t, after=after):
            rates = np.full(SEGMENTS, 0.02)
            rates[0] = after if t >= CHANGE else 0.02
            return rates
        audited, errors = draws(streams, CHANGE + 89, rate, seed=int(after * 1000))
        for name, method in (("e-detector", detector), ("windowed binomial", windowed)):
            start = time.perf_counter()
            first = method(audited, errors)
            seconds = time.perf_counter() - start
            caught = first[:, 0] >= CHANGE
            delay = np.where(caught, first[:, 0] - CHANGE + 1, 10**6)
            early = float(((first[:, 0] > 0) & (first[:, 0] < CHANGE)).mean())
            print(f"| 0.02 -> {after} | {name} ({seconds:.1f} s) | {float((delay <= target).mean()):.3f} within "
                  f"{target} | {np.median(delay):g} | {np.percentile(delay, 90):g} | {early:.3f} | "
                  f"{float((first[:, 1:] > 0).any(axis=1).mean()):.3f} |")
    print()


def false_alarms(streams: int) -> None:
    print(f"## False alarms: {streams} no-change streams, 365 days, {SEGMENTS} segments (delta {DELTA})\n")
    print("| null | e-detector | windowed binomial |\n|---|---|---|")
    for name, realised in (("binomial audits at EPS", False), ("realised rate exactly EPS each day", True)):
        audited, errors = draws(streams, 365, lambda t: np.full(SEGMENTS, EPS), seed=99, realised=realised)
        shares = [float((method(audited, errors) > 0).any(axis=1).mean()) for method in (detector, windowed)]
        error = math.sqrt(DELTA * (1 - DELTA) / streams)
        print(f"| {name} | {shares[0]:.4f} (+/- {error:.4f}) | {shares[1]:.4f} |")
    print()


def calibrated_day(rng: np.random.Generator, factor: float) -> Tally:
    """One segment-day of a calibrated model: P(wrong) = 0.6 (1 - c) x ``factor``."""
    confidence = np.round(1.0 - rng.beta(1.0, 12.0, 300), 4)
    wrong = rng.random(300) < np.minimum(0.6 * factor * (1.0 - confidence), 1.0)
    reviewed = confidence < 0.9
    audited = ~reviewed & (rng.random(300) < 0.25)
    route = np.where(reviewed, 1, np.where(audited, 2, 0))
    correct = np.where(reviewed | audited, (~wrong).astype(int), -1)
    return Tally.of(route=route, inclusion=np.where(reviewed, 1.0, 0.25), correct=correct, confidence=confidence)


def label_free(streams: int) -> None:
    print(f"## The label-free tier: {streams} streams of 2 segments through the watcher\n")
    print("| stream | contradicted | median days to calibration_contradicted | median days to "
          "error_above_target |\n|---|---|---|---|")
    for name, days, change in (("calibrated, 180 days", 180, None), ("template x4 from day 31", 60, 31)):
        contradicted, to_calibration, to_error = 0, [], []
        for seed in range(streams):
            rng = np.random.default_rng(seed)
            watcher = Watcher(WatchSettings(max_error=0.05))
            for t in range(days):
                factor = 4.0 if change is not None and t + 1 >= change else 1.0
                watcher.add_day(f"d{t:04d}", {(("document_type", "a"),): calibrated_day(rng, factor),
                                              (("document_type", "b"),): calibrated_day(rng, 1.0)})
            kinds = {(alarm.segment[0][1], alarm.kind): int(alarm.day[1:]) + 1 for alarm in watcher.alarms}
            contradicted += ("a", "calibration_contradicted") in kinds or ("b", "calibration_contradicted") in kinds
            if change is not None:
                for kind, found in (("calibration_contradicted", to_calibration), ("error_above_target", to_error)):
                    if ("a", kind) in kinds and kinds[("a", kind)] >= change:
                        found.append(kinds[("a", kind)] - change + 1)
        delays = [f"{np.median(found):g} ({len(found)} of {streams})" if found else "-"
                  for found in (to_calibration, to_error)]
        print(f"| {name} | {contradicted / streams:.3f} | {delays[0]} | {delays[1]} |")
    print()


def write_logs(path: Path) -> int:
    """365 days x 10 segments x 300 units (about 1.1 M rows), calibrated, reviewed under 0.9, audited at 0.1."""
    rng = np.random.default_rng(0)
    rows = 0
    with path.open("w") as out:
        for t in range(365):
            day = time.strftime("%Y-%m-%d", time.gmtime(1704067200 + 86400 * t))
            confidence = 1.0 - rng.beta(1.0, 12.0, (10, 300))
            wrong = rng.random((10, 300)) < 0.6 * (1.0 - confidence)
            audit = rng.random((10, 300)) < 0.1
            lines = []
            for s in range(10):
                for i in range(300):
                    c = confidence[s, i]
                    if c < 0.9:
                        route, rate, correct = "review", 1, "false" if wrong[s, i] else "true"
                    elif audit[s, i]:
                        route, rate, correct = "audit", 0.1, "false" if wrong[s, i] else "true"
                    else:
                        route, rate, correct = "auto", 0.1, "null"
                    lines.append(f'{{"day":"{day}","id":"d{t}-{s}-{i // 6}","document_type":"type{s}",'
                                 f'"key":"field{i % 6}","value":"v{i}","confidence":{c:.4f},"route":"{route}",'
                                 f'"inclusion_probability":{rate},"correct":{correct}}}')
            out.write("\n".join(lines) + "\n")
            rows += len(lines)
    return rows


def speed() -> None:
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "year.jsonl"
        rows = write_logs(log)
        start = time.perf_counter()
        with log.open("rb") as handle:
            for line in handle:
                json.loads(line)
        baseline = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "rpa_sim.cli", "watch", str(log), "--max-error", "0.05", "--json",
                        "--out", str(Path(folder) / "out.json")], check=True, capture_output=True)
        watched = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"## Speed: {rows:,} rows ({log.stat().st_size / 2**20:,.0f} MiB), 365 days x 10 segments\n")
        print(f"json.loads over the lines: {baseline:.2f} s; rpa-sim watch (a fresh process, start-up included): "
              f"{watched:.2f} s, {watched / baseline:.2f} x json.loads; peak resident memory {peak:,.0f} MiB\n")


def main() -> None:
    streams = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 500
    if "--no-speed" not in sys.argv:
        # first, while this process is small: a child's peak memory counts the pages it was forked with
        speed()
    detection(streams)
    false_alarms(streams)
    label_free(min(streams, 100))


if __name__ == "__main__":
    main()
