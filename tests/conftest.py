"""What the test modules share: the ``../shared`` material (a skip when it is absent), the command line run in
this process, the processes a test starts and signals, and hypothesis's profiles."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings

# The suite draws the same examples at every run (a hash of each test), so that a run that passed passes again
# and a failure in CI reproduces with the same command; HYPOTHESIS_PROFILE=explore draws new ones each run.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"


def shared_path(*parts: str) -> Path:
    """A path under ``../shared``; the calling test is skipped when it does not exist."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared test material is not beside the project")
    return path


def load_vectors(name: str) -> dict:
    """One of the JSON files of ``../shared/vectors`` (skips when absent)."""
    return json.loads(shared_path("vectors", name).read_text(encoding="utf-8"))


def vector_cases(name: str, key: str) -> list:
    """The cases listed under ``key`` in ``../shared/vectors/NAME`` as parameters named by their "name".

    Parameters are built at collection, where a skip is not allowed: without the shared material this is a
    single parameter that skips with the reason, so a clone without ``../shared`` still collects.
    """
    path = SHARED / "vectors" / name
    if not path.exists():
        reason = f"{path} is absent: the shared test material is not beside the project"
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="absent")]
    cases = json.loads(path.read_text(encoding="utf-8"))[key]
    return [pytest.param(case, id=case["name"]) for case in cases]


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """``rpa-sim ARGV`` in this process: the exit status, standard output and standard error."""
    from rpa_sim.cli.entry import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def modules_after(statements: str) -> set[str]:
    """The modules loaded once ``statements`` ran in a fresh interpreter that imported the command line
    (``rpa_sim.cli.entry``); what they print is kept out of the way."""
    code = ("import json, sys, contextlib, io\nimport rpa_sim.cli.entry\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            + textwrap.indent(statements, "    ") + "\nprint(json.dumps(sorted(sys.modules)))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    return set(json.loads(completed.stdout.splitlines()[-1]))


def write_lines(path: Path, *records: dict | str) -> Path:
    """A JSON Lines file of ``records`` (dicts are dumped, strings written as they are)."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def send_signal(process: subprocess.Popen, how: str) -> None:
    """Send SIGINT or SIGTERM (named in ``how``) to ``process``, or to its whole group when ``how`` says "group"
    (what Ctrl-C does: the workers get it too). The process must lead its own session."""
    signum = signal.SIGINT if "SIGINT" in how else signal.SIGTERM
    if "group" in how:
        os.killpg(process.pid, signum)
    else:
        os.kill(process.pid, signum)


def kill_group(process: subprocess.Popen) -> None:
    """Kill the process group of ``process`` if it still runs: a test that fails leaves no command behind."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid``, from /proc."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """Whether the process ``pid`` runs (a zombie, which has ended but not been waited for, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
