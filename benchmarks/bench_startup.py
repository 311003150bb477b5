"""Command-line start-up: ``rpa-sim --version`` and ``rpa-sim --help`` against ``python -c "import numpy"``.

Target (issue 9): each within 2.5x of the baseline, measured in the same run.
Every command is run ``N`` times, alternating with the baseline so that a
change in the machine's load hits both alike; the figure is the median wall
time of a run (process start to exit). The command is the console script
pip installed beside this Python (not a shell shim such as pyenv's, whose own
start-up would be measured too); the baseline is the same Python importing
numpy, which any command that computes needs anyway.

    python benchmarks/bench_startup.py [N]   # N defaults to 21
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET = 2.5


def console_script() -> list[str]:
    beside = Path(sys.executable).with_name("rpa-sim")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("rpa-sim")
    if found is None:
        sys.exit("rpa-sim is not installed: pip install -e .")
    return [found]


def wall_time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    script = console_script()
    baseline_command = [sys.executable, "-c", "import numpy"]
    commands = {"rpa-sim --version": [*script, "--version"], "rpa-sim --help": [*script, "--help"]}
    for command in [baseline_command, *commands.values()]:  # warm the file cache
        wall_time(command)
    times: dict[str, list[float]] = {name: [] for name in ["import numpy", *commands]}
    for _ in range(runs):
        times["import numpy"].append(wall_time(baseline_command))
        for name, command in commands.items():
            times[name].append(wall_time(command))
    baseline = statistics.median(times["import numpy"])
    print(f"{runs} runs each, median wall time; script: {script[0]}")
    print(f"  {'python -c ' + repr('import numpy'):<28} {baseline * 1000:7.1f} ms  (baseline)")
    worst = 0.0
    for name in commands:
        median = statistics.median(times[name])
        worst = max(worst, median / baseline)
        print(f"  {name:<28} {median * 1000:7.1f} ms  {median / baseline:5.2f}x")
    verdict = "within" if worst <= TARGET else "ABOVE"
    print(f"worst ratio {worst:.2f}x: {verdict} the {TARGET}x target")


if __name__ == "__main__":
    main()
