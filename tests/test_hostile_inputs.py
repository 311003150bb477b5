"""Hostile input for every command: random bytes, near-valid files, random YAML and random option values.

Every command of ``rpa-sim`` (and every ``import`` format) runs on inputs drawn by hypothesis: files of
random bytes; near-valid files (a valid record file, outcome table, log, plan or importer source with bytes
flipped, lines cut, or a value replaced by a hostile JSON value: huge numbers, NaN, deep nesting, long
strings, control characters); random YAML and mutations of the bundled policies and scenarios; random
option values and combinations. Whatever it gets, a command must

- exit with 0, 1 or 2, in time and under a memory limit, never by a signal;
- when it does not succeed, print exactly one line on standard error, ``rpa-sim: error: ...``, without a
  traceback or a control character;
- leave its input files as they were, and no file or folder behind but the outputs it was asked for (no
  ``.tmp``, nothing at all when it fails), and no process.

Each example runs in a child forked from the test process (which imported the heavy modules once), under
``RLIMIT_AS`` and ``RLIMIT_FSIZE``, with standard output and error redirected to files and a fresh folder as
its working directory; the parent waits with a timeout and kills the child's process group on expiry. A few
examples run as real processes of the ``rpa-sim`` console script. The default run is deterministic
(``derandomize=True``) and takes about a minute; ``python -m pytest -m slow tests/test_hostile_inputs.py``
explores many more examples (``docs/cli.md``).
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import hashlib
import importlib
import json
import operator
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.conftest import SHARED

# ------------------------------------------------------------------ limits

#: The child's address-space limit: numpy, scipy, pyarrow and matplotlib work under it (each command's
#: successful run was checked), a command that reads a device or builds a runaway structure meets it.
MEMORY_LIMIT = 3 * 2**30
#: The largest file a child may write: a runaway output ends in SIGXFSZ, a failure, rather than a full disk.
FILE_SIZE_LIMIT = 512 * 2**20
#: Seconds an example may take before it counts as a runaway.
TIMEOUT = 60.0
#: How long the processes a command started may take to go once it has exited.
PROCESS_GRACE = 3.0
#: The child's exit status when ``main`` raised instead of returning (the traceback is on its stderr).
UNCAUGHT = 70

# the modules the commands import on demand, imported once in the test process so that a forked child
# starts at once
_HEAVY_MODULES = (
    "rpa_sim.cli.entry", "rpa_sim.evaluate.load", "rpa_sim.records.readers", "rpa_sim.evaluate.local",
    "rpa_sim.route.sweep", "rpa_sim.route.certify", "rpa_sim.study.run", "rpa_sim.report.page",
    "rpa_sim.study.scenario", "rpa_sim.route.policies", "rpa_sim.evaluate.tablefile", "rpa_sim.evaluate.sources",
    "rpa_sim.records.synthetic", "rpa_sim.common.yamlfile", "rpa_sim.common.files", "rpa_sim.evaluate.cluster",
    "rpa_sim.records.importers.cord", "rpa_sim.records.importers.docile", "rpa_sim.records.importers.dude",
    "rpa_sim.records.importers.textract", "rpa_sim.records.importers.kieval_csv",
    "rpa_sim.records.importers.azure_di", "rpa_sim.records.importers.google_docai",
    "rpa_sim.records.importers.mindee", "rpa_sim.operate.monitoring.estimators", "rpa_sim.operate.monitoring.log",
    "rpa_sim.operate.monitoring.replay", "rpa_sim.operate.monitoring.planning",
    "rpa_sim.operate.monitoring.audit_plan", "rpa_sim.operate.queue.erlang", "rpa_sim.operate.queue.staffing",
    "rpa_sim.operate.queue.simulation", "rpa_sim.operate.queue.summary", "pyarrow.parquet", "scipy.stats",
    "scipy.optimize", "scipy.special")

# ------------------------------------------------------------------ running one example


@dataclass
class Outcome:
    """What one run of a command did."""

    status: int | None  #: the exit status; None when a signal ended the process
    signal: int | None  #: the signal that ended it
    timed_out: bool
    stdout: bytes
    stderr: bytes
    seconds: float
    leftover_processes: list[str]


def _group_members(group: int) -> list[str]:
    """The processes of process group ``group``, as ``pid name``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name_end = stat.rindex(")")
        fields = stat[name_end + 2:].split()
        if int(fields[2]) == group:
            members.append(f"{entry.name} {stat[stat.index('(') + 1:name_end]} ({fields[0]})")
    return members


def _wait_for_group(group: int) -> list[str]:
    """Wait until process group ``group`` is empty; kill and name what is left after :data:`PROCESS_GRACE`."""
    deadline = time.monotonic() + PROCESS_GRACE
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return []
        if time.monotonic() > deadline:
            left = _group_members(group)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
            return left
        time.sleep(0.02)


def _child(argv: list[str], folder: Path, scratch: Path) -> None:
    """The forked child: limits, redirections, a fresh working folder, then ``main``; never returns."""
    status = UNCAUGHT
    try:
        os.setpgid(0, 0)
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(os.open(scratch / "stdout", flags, 0o600), 1)
        os.dup2(os.open(scratch / "stderr", flags, 0o600), 2)
        # what a process started from a shell has: stdin not a terminal, stderr escaping what it cannot encode
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace",  # noqa: SIM115
                          closefd=False)
        os.environ["TMPDIR"] = tempfile.tempdir = str(scratch / "tmp")
        os.chdir(folder)
        from rpa_sim.cli.entry import main

        returned = main(argv)
        status = returned if isinstance(returned, int) and 0 <= returned < UNCAUGHT else UNCAUGHT + 1
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(status)


def run_forked(argv: list[str], folder: Path, *, timeout: float = TIMEOUT) -> Outcome:
    """``rpa-sim ARGV`` in a forked child working in ``folder``, under the limits; see :func:`_child`."""
    scratch = Path(tempfile.mkdtemp(prefix="rpa-sim-hostile-io-"))
    (scratch / "tmp").mkdir()
    for name in ("stdout", "stderr"):
        (scratch / name).touch()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(argv, folder, scratch)
    with contextlib.suppress(OSError):  # the child did it first, or is gone already
        os.setpgid(pid, pid)
    timed_out, pause = False, 0.001
    while True:
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - started > timeout:
            timed_out = True
            os.killpg(pid, signal.SIGKILL)
            _, wait_status = os.waitpid(pid, 0)
            break
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    seconds = time.monotonic() - started
    leftover = _wait_for_group(pid)
    stray_temporary = [str(p.relative_to(scratch)) for p in (scratch / "tmp").rglob("*")]
    outcome = Outcome(status=os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else None,
                      signal=os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else None,
                      timed_out=timed_out, stdout=(scratch / "stdout").read_bytes(),
                      stderr=(scratch / "stderr").read_bytes(), seconds=seconds,
                      leftover_processes=leftover + [f"temporary file {name}" for name in stray_temporary])
    shutil.rmtree(scratch, ignore_errors=True)
    return outcome


def run_console_script(argv: list[str], folder: Path, *, timeout: float = TIMEOUT) -> Outcome:
    """``rpa-sim ARGV`` as a real process of the console script, under the same limits."""
    script = Path(sys.executable).with_name("rpa-sim")
    if not script.exists():
        script = Path(shutil.which("rpa-sim") or "rpa-sim")
    scratch = Path(tempfile.mkdtemp(prefix="rpa-sim-hostile-io-"))
    (scratch / "tmp").mkdir()

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))

    started = time.monotonic()
    process = subprocess.Popen([str(script), *argv], cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True, preexec_fn=limits,
                               env={**os.environ, "TMPDIR": str(scratch / "tmp")})
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    seconds = time.monotonic() - started
    leftover = _wait_for_group(process.pid)
    leftover += [f"temporary file {p.relative_to(scratch)}" for p in (scratch / "tmp").rglob("*")]
    shutil.rmtree(scratch, ignore_errors=True)
    code = process.returncode
    return Outcome(status=code if code >= 0 else None, signal=-code if code < 0 else None, timed_out=timed_out,
                   stdout=stdout, stderr=stderr, seconds=seconds, leftover_processes=leftover)


# ------------------------------------------------------------------ the folder a command works in


def snapshot(folder: Path) -> dict[str, str]:
    """Every file (its SHA-256) and folder (``dir``) under ``folder``, by path relative to it."""
    entries = {}
    for path in folder.rglob("*"):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            entries[name] = f"link {os.readlink(path)}"
        elif path.is_dir():
            entries[name] = "dir"
        else:
            entries[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return entries


class Invocation:
    """One command line and the files it runs on (a plain class: hypothesis prints its short ``repr``)."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.files: dict[str, bytes] = {}  #: path relative to the working folder -> content
        self.outputs: list[str] = []  #: what the command is asked to write (files or folders)
        self.inputs: list[str] = []  #: what it is asked to read (files or folders)

    def write(self, folder: Path) -> None:
        for name, content in self.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)

    def __repr__(self) -> str:
        def short(text: str | bytes, limit: int) -> str:
            return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text):,} in all)"

        argv = ", ".join(short(word, 100) for word in self.argv)
        files = ", ".join(f"{name!r}: {short(content, 160)}" for name, content in self.files.items())
        return f"Invocation(argv=[{argv}], files={{{files}}})"


def _inside(name: str, folders: list[str]) -> bool:
    return any(top == "." or name == top or name.startswith(top.rstrip("/") + "/") for top in folders)


def _normal(name: str) -> str:
    return os.path.normpath(name).lstrip("/") if name else name


def problems(invocation: Invocation, outcome: Outcome, before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Every way ``outcome`` breaks the rules of the module docstring; empty when it keeps them all."""
    found = []
    if outcome.timed_out:
        found.append(f"still running after {TIMEOUT:g} s (killed)")
    elif outcome.signal is not None:
        found.append(f"ended by signal {signal.Signals(outcome.signal).name}")
    elif outcome.status not in (0, 1, 2):
        found.append(f"exit status {outcome.status}")
    stderr = outcome.stderr.decode("utf-8", "backslashreplace")
    if "Traceback" in stderr or "MemoryError" in stderr:
        found.append("a traceback on stderr: " + stderr.strip().splitlines()[-1][:300])
    if outcome.status != 0:
        lines = stderr.removesuffix("\n").split("\n")  # the lines of a terminal (a \x85 is a control character)
        if len(lines) != 1:
            found.append(f"{len(lines)} lines on stderr, not one: {stderr[:300]!r}")
        elif not lines[0].startswith("rpa-sim: error: "):
            found.append(f"stderr does not start with 'rpa-sim: error: ': {lines[0][:300]!r}")
        if not all(line.isprintable() for line in lines):
            found.append(f"a control character on stderr: {stderr[:300]!r}")
    found += [f"process left: {name}" for name in outcome.leftover_processes]
    # the inputs: files named on the command line, or inside a folder or glob named there, or read by a scenario
    outputs = [_normal(name) for name in invocation.outputs]
    protected = {name for name in before if before[name] != "dir"
                 and (_inside(name, [_normal(n) for n in invocation.inputs]) or not _inside(name, outputs))}
    for name in sorted(protected):
        if after.get(name) != before[name]:
            found.append(f"input {name} {'removed' if name not in after else 'changed'}")
    for name in sorted(set(after) - set(before)):
        if name.endswith(".tmp") or (Path(name).name.startswith(".") and ".tmp" in name):
            found.append(f"temporary file left: {name}")
        elif outcome.status != 0:
            found.append(f"left {name} although the command failed")
        elif not (_inside(name, outputs) or any(out.startswith(name + "/") for out in outputs)):
            found.append(f"wrote {name}, which is no declared output")
    return found


def check(invocation: Invocation, *, runner: Callable[..., Outcome] = run_forked) -> None:
    """Run ``invocation`` in a fresh folder and assert every rule of the module docstring."""
    folder = Path(tempfile.mkdtemp(prefix="rpa-sim-hostile-"))
    try:
        invocation.write(folder)
        before = snapshot(folder)
        outcome = runner(invocation.argv, folder)
        after = snapshot(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    found = problems(invocation, outcome, before, after)
    stderr = outcome.stderr.decode("utf-8", "backslashreplace")
    assert not found, (f"{invocation!r}\nexit {outcome.status}, signal {outcome.signal}, {outcome.seconds:.1f} s\n"
                       f"stderr: {stderr[-2000:]}\nproblems: {found}")


# ------------------------------------------------------------------ material: valid files to start from


@dataclass
class Material:
    """Valid inputs of every kind, made once per session, that the strategies mutate."""

    receipts: bytes  #: 3 receipts (KIE records)
    questions: bytes  #: 3 document questions (VQA records)
    table: bytes  #: the outcome table of the receipts
    tables_with_hostile_metadata: list[bytes]  #: the table, a value of its ``rpa_sim`` metadata made hostile in each
    log: bytes  #: a production log of the receipts
    plan: bytes  #: an audit plan (YAML)
    policies: dict[str, str]  #: bundled name -> YAML text
    scenarios: dict[str, str]  #: bundled name -> YAML text, with small data
    importer_sources: dict[str, dict[str, bytes]]  #: import format -> files of a valid source


def _small_scenarios(folder: Path) -> dict[str, str]:
    """The bundled scenarios made to run in a moment (20 documents, one simulated day, 20 replicates), and two
    that read the files beside them: ``data.jsonl`` and ``policy.yaml``."""
    scenarios = {}
    for path in sorted(folder.glob("*.yaml")):
        scenario = yaml.safe_load(path.read_text())
        scenario["data"]["n"] = 20
        scenario["replicates"] = min(scenario.get("replicates", 0), 20)
        if "operations" in scenario:
            scenario["operations"]["days"] = 1
        scenarios[path.stem] = scenario
    beside = copy.deepcopy(scenarios["receipts-demo"])
    beside["data"] = {"file": "data.jsonl"}
    beside["policies"][0] = "policy.yaml"
    scenarios["beside"] = beside
    scenarios["beside-operations"] = {**scenarios["operations-day"], "data": {"file": "data.jsonl"}}
    return {name: yaml.safe_dump(scenario, sort_keys=False) for name, scenario in scenarios.items()}


def _importer_sources() -> dict[str, dict[str, bytes]]:
    """A small valid source for each import format, from ``../shared/data`` (none when it is absent)."""
    data = SHARED / "data"
    picks = {
        "kieval-csv": {"src/gt/44.csv": "kieval_qwen72b_cord/csv/gt/44.csv",
                       "src/pred/44.csv": "kieval_qwen72b_cord/csv/pred/44.csv"},
        "cord": {"src/receipt_00025.json": "cord/json/receipt_00025.json",
                 "predictions/025.json": "kieval_qwen72b_cord/model_output/025.json"},
        "docile": {"src/dev.json": "docile/dev.json",
                   "src/annotations/516f2d61ea404b30a9192a72.json": "docile/annotations/516f2d61ea404b30a9192a72.json",
                   "src/ocr/516f2d61ea404b30a9192a72.json": "docile/ocr/516f2d61ea404b30a9192a72.json"},
        "textract-expense": {"src/expense.json": "textract/analyze_expense_costco_receipt.json"},
        "dude": {"src/gt.json": "dude/DUDE_demo_gt.json",
                 "predictions/submission.json": "dude/DUDE_demo_submission_imperfect.json"},
        "azure-di": {"src/receipt.json": "vendors/azure/receipt_v2.1_analyze_result.json"},
        "google-docai": {"src/invoice.json": "vendors/google-docai/invoice_parser_output.json"},
    }
    sources = {name: {target: (data / source).read_bytes() for target, source in files.items()}
               for name, files in picks.items() if all((data / source).exists() for source in files.values())}
    # no real Mindee response is shared: the hand-made ones of the tests
    sources["mindee"] = {f"src/{path.name}": path.read_bytes()
                         for path in sorted((Path(__file__).parent / "data" / "mindee").glob("*.json"))}
    # the formats whose samples are the project's own test data (tests/data)
    own = Path(__file__).parent / "data"
    sources["label-studio"] = {"src/export.json": (own / "label_studio" / "receipts_ocr.json").read_bytes()}
    sources["mapping"] = {"src/batch.json": (own / "mapping" / "service_batch.json").read_bytes()}
    return sources


#: The mapping file of ``import mapping`` that fits its sample source, which the strategies mutate.
MAPPING_FILE = (Path(__file__).parent / "data" / "mapping" / "service_batch.yaml").read_text()


# what a table's metadata gets instead of one of its values, in turn (NaN is written as JSON's NaN extension)
_HOSTILE_METADATA = (float("nan"), -1, 1e308, 10**30, "x" * 10_000, None, [], {}, "\x1b[2J", True, "1", -0.0, 0.5)


def _tables_with_hostile_metadata(folder: Path) -> list[bytes]:
    """``folder/t.parquet`` rewritten with each value of its ``rpa_sim`` metadata, in turn, replaced by one of
    :data:`_HOSTILE_METADATA`, and with metadata that is no JSON; made in a forked child, so that pyarrow
    starts no thread in the test process, which forks every example."""
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            import pyarrow.parquet as pq

            table = pq.read_table(folder / "t.parquet")
            metadata = json.loads(table.schema.metadata[b"rpa_sim"])
            variants = [json.dumps(_replace(metadata, path, _HOSTILE_METADATA[index % len(_HOSTILE_METADATA)]))
                        for index, path in enumerate(_paths(metadata)[1:])] + ["{", "", "[]", "null"]
            for index, text in enumerate(variants):
                pq.write_table(table.replace_schema_metadata({b"rpa_sim": text.encode()}),
                               folder / f"metadata-{index:03d}.parquet")
            status = 0
        finally:
            os._exit(status)
    _, wait_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(wait_status) == 0
    return [path.read_bytes() for path in sorted(folder.glob("metadata-*.parquet"))]


def _made(argv: list[str], folder: Path, name: str) -> bytes:
    outcome = run_forked(argv, folder)
    assert outcome.status == 0, outcome.stderr.decode()
    return (folder / name).read_bytes()


def make_material(folder: Path) -> Material:
    """The heavy modules imported, and valid inputs of every kind made in ``folder``."""
    for module in _HEAVY_MODULES:
        importlib.import_module(module)
    from rpa_sim.bundled import __file__ as bundled

    receipts = _made(["generate", "receipts", "--n", "3", "--seed", "1", "--out", "r.jsonl", "--workers", "1"],
                     folder, "r.jsonl")
    questions = _made(["generate", "docvqa", "--n", "3", "--seed", "1", "--out", "q.jsonl", "--workers", "1"],
                      folder, "q.jsonl")
    table = _made(["evaluate", "r.jsonl", "--out", "t.parquet", "--workers", "1"], folder, "t.parquet")
    log = _made(["replay", "r.jsonl", "--policy", "audited-budget", "--threshold", "0.9", "--audit-rate", "0.5",
                 "--seed", "1", "--out", "log.jsonl", "--workers", "1"], folder, "log.jsonl")
    plan = _made(["plan-audit", "r.jsonl", "--policy", "confidence", "--threshold", "0.9", "--budget", "5",
                  "--out", "plan.yaml", "--workers", "1"], folder, "plan.yaml")
    bundled_folder = Path(bundled).parent
    return Material(
        receipts=receipts, questions=questions, table=table, log=log, plan=plan,
        tables_with_hostile_metadata=_tables_with_hostile_metadata(folder),
        policies={p.stem: p.read_text() for p in sorted((bundled_folder / "policies").glob("*.yaml"))},
        scenarios=_small_scenarios(bundled_folder / "scenarios"),
        importer_sources=_importer_sources())


@pytest.fixture(scope="session")
def material(tmp_path_factory: pytest.TempPathFactory) -> Material:
    return make_material(tmp_path_factory.mktemp("hostile-material"))


# ------------------------------------------------------------------ strategies: hostile values

#: Option values that have broken number parsers somewhere.
HOSTILE_NUMBERS = ("1e308", "-1e308", "1e309", "-0", "-0.0", "0", "0.0", "nan", "NaN", "-nan", "inf", "-inf",
                   "Infinity", "1e-20", "5e-324", "-1", "1", "2", "0.5", "0.999999999999999999", "3", "1000000",
                   str(2**31), str(2**63), str(2**64), "99999999999999999999999999999", "9" * 5000, "", " ",
                   " 1 ", "1_000", "0x10", "1e", "+1", "١", "１", "½", "\u00a01", "1,5", "True", "None")
#: Option values that are not numbers.
HOSTILE_TEXTS = ("", " ", "-", "--", "-1", "--help", "\udcff", "\x1b[31mred\x1b[0m", "\u202eevil", "a\nb", "\r",
                 "\t", "\x7f", "\u2028", "é" * 300, "x" * 100_000, "'", '"', "\\", "%s%n", "{}", "${HOME}",
                 "~", "*", "?", "[", "exact", "local", "sweep")

numbers = st.one_of(st.sampled_from(HOSTILE_NUMBERS), st.integers().map(str), st.floats().map(repr),
                    st.floats(0, 1).map(str), st.integers(0, 10**30).map(str), st.integers(0, 20).map(str))
# command-line text: what a process can receive (no NUL; surrogates only as undecodable bytes, surrogateescape)
texts = st.one_of(st.sampled_from(HOSTILE_TEXTS), st.text(st.characters(exclude_characters="\x00",
                                                                          exclude_categories=("Cs",)), max_size=30))
# numbers in the ranges the options take, which get an example past the parser
_EVERYDAY_NUMBERS = ("0.5", "1", "0.05", "0.95", "3", "0", "3600", "1e6")
plausible_numbers = st.one_of(st.sampled_from(["0", "1", "2", "3", "0.5", "0.05", "0.95", "0.999", "1e-9", "10",
                                               "100", "3600", "1e6"]), st.floats(0, 1).map(repr),
                              st.integers(0, 100).map(str), st.floats(0, 1000).map(repr))
thresholds = st.one_of(
    st.sampled_from(["exact", "exact,", "linspace:0:1:11", "linspace:0:1:0", "linspace:1:0:5", "linspace:0:1",
                     "linspace:0:1:1e6", "linspace:0:1:1000001", "linspace::1:3", ":", ",", "0.5,", ",0.5"]),
    st.builds(lambda a, b, n: f"linspace:{a}:{b}:{n}", numbers, numbers, numbers),
    st.lists(numbers, min_size=1, max_size=4).map(",".join), texts)
schedulers = st.one_of(st.sampled_from(["local:0", "local:-1", "local:x", "tcp://", "tcp://h:0", "tcp://h:99999",
                                        "tcp://[::1", "udp://h:1", "local:1.5", "LOCAL"]), texts)

# JSON values a parser may choke on, as raw JSON text (so that NaN, huge numbers and deep nesting can be written)
HOSTILE_JSON = ("NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e308", "-0", "-0.0", "5e-324", "1" + "0" * 400,
                "1" + "0" * 5000, "-" + "9" * 30, "true", "false", "null", "[]", "{}", '""', '" "', "0", "1", "-1",
                "0.5", "2", '"0.5"', '"NaN"', '"\\u0000\\u001b[31m\\u202e\\u0085"', '"\\ud800"', '"\\udfff\\ud800"',
                '"a\x01b"', '"' + "x" * 1_000_000 + '"', "[" * 50 + "]" * 50, "[" * 100_000 + "]" * 100_000,
                '{"a":' * 5000 + "1" + "}" * 5000, '{"id": "a", "id": "b"}', '"' + "é" * 5000 + '"',
                "[" + ",".join(["0.5"] * 100_000) + "]", '"\\n\\r\\t"', '"<script>"')
json_values = st.one_of(
    st.sampled_from(HOSTILE_JSON),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                 | st.text(max_size=20), lambda inner: st.lists(inner, max_size=4)
                 | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=10).map(json.dumps))

# the same for YAML, as objects (dumped) and as text (inserted)
yaml_objects = st.one_of(
    st.sampled_from([float("nan"), float("inf"), float("-inf"), -0.0, 10**400, 1e308, 5e-324, "", "x" * 100_000,
                     "\x1b[31mred", "\u202eevil", "\x85", "\x00", None, True, [], {}, b"\x00\xff", 0, -1, 1, 2, 0.5,
                     "0.5", "sweep", "review", "document", "-1", json.loads("[" * 30 + "1" + "]" * 30),
                     {"name": "x"}, ["confidence", "confidence"], "../x", "/dev/zero", "data.jsonl"]),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                 lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                 max_leaves=12))
_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))
YAML_SNIPPETS = ("\x00", "\x1b[2J", "\t", "\ufeff", "\x85", "\u2028", "key: [", "{", "- -", ": :", "&x [*x]",
                 "<<: *nope", "!!python/object/apply:os.system ['true']", "!!binary AAAA", "!!set {a, b}",
                 "? [a, b]\n: 1", "---\n---\n", "...", "%YAML 9.9\n---", "!!timestamp 2001-12-14", "*undefined",
                 "key: &anchor value\nother: *anchor", "[" * 10_000 + "]" * 10_000, "x: " + "y" * 1_000_000,
                 _LAUGHS, "name: a\nname: b", "'unterminated", '"\\ud800"', "!<tag:yaml.org,2002:str> x", "\r\n\r")


@st.composite
def mutated_bytes(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` with bytes flipped, inserted or cut, lines dropped, duplicated or cut short, or a BOM / CRLF."""
    content = bytearray(seed)
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["flip", "insert", "truncate", "drop line", "duplicate line", "cut line",
                                    "bom", "crlf", "nul"]))
        at = draw(st.integers(0, max(len(content) - 1, 0)))
        lines = bytes(content).split(b"\n")
        line = draw(st.integers(0, len(lines) - 1))
        if how == "flip" and content:
            content[at] = draw(st.integers(0, 255))
        elif how == "insert":
            content[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif how == "truncate":
            del content[at:]
        elif how == "drop line":
            content = bytearray(b"\n".join(lines[:line] + lines[line + 1:]))
        elif how == "duplicate line":
            content = bytearray(b"\n".join(lines[:line + 1] + lines[line:]))
        elif how == "cut line":
            lines[line] = lines[line][:draw(st.integers(0, max(len(lines[line]) - 1, 0)))]
            content = bytearray(b"\n".join(lines))
        elif how == "bom":
            content[:0] = b"\xef\xbb\xbf"
        elif how == "crlf":
            content = bytearray(bytes(content).replace(b"\n", b"\r\n"))
        else:
            content[at:at] = b"\x00"
    return bytes(content)


def _accepts(action: Any, text: str) -> bool:
    """Whether the parser takes ``text`` as the value of ``action``."""
    import argparse

    try:
        action.type(text)
    except (argparse.ArgumentTypeError, TypeError, ValueError):
        return False
    return True


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (a tuple of keys and indices) into a JSON or YAML value, the value itself first."""
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _paths(inner, (*prefix, index))
    return found


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    value = copy.copy(value)
    value[path[0]] = _replace(value[path[0]], path[1:], new)
    return value


def _delete(value: Any, path: tuple) -> Any:
    if len(path) == 1:
        value = copy.copy(value)
        del value[path[0]]
        return value
    return _replace(value, path[:1], _delete(value[path[0]], path[1:]))


@st.composite
def mutated_json_document(draw: st.DrawFn, document: Any) -> str:
    """JSON ``document`` with one value replaced by a hostile one, or deleted, or a key added."""
    placeholder = "\ue000hostile\ue000"
    path = draw(st.sampled_from(_paths(document)))
    how = draw(st.sampled_from(["replace", "replace", "delete", "add key"]))
    if how == "delete" and path:
        return json.dumps(_delete(document, path), ensure_ascii=False)
    if how == "add key" and isinstance(document, dict):
        document = {**document, draw(st.text(max_size=12)): placeholder}
    else:
        document = _replace(document, path, placeholder)
    return json.dumps(document, ensure_ascii=False).replace(json.dumps(placeholder, ensure_ascii=False),
                                                            draw(json_values), 1)


@st.composite
def mutated_json(draw: st.DrawFn, seed: bytes) -> bytes:
    """A JSON (or JSON Lines) file ``seed`` with one of its values made hostile (:func:`mutated_json_document`)."""
    text = seed.decode()
    try:
        return draw(mutated_json_document(json.loads(text))).encode()
    except json.JSONDecodeError:  # JSON Lines: one line made hostile
        lines = text.splitlines()
        index = draw(st.integers(0, len(lines) - 1))
        lines[index] = draw(mutated_json_document(json.loads(lines[index])))
        return ("\n".join(lines) + "\n").encode()


def near_valid(seed: bytes) -> st.SearchStrategy[bytes]:
    """``seed`` as it is, or mutated as bytes or as JSON."""
    return st.one_of(st.just(seed), mutated_bytes(seed), mutated_json(seed), mutated_json(seed))


def any_bytes(max_size: int = 2000) -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(max_size=max_size), st.sampled_from([b"", b"\n", b"\n" * 1000, b"\xef\xbb\xbf",
                                                                     b"{}\n", b"[]", b"null", b"\x00" * 100]))


def _dump_yaml(value: Any, unicode: bool) -> str:
    try:
        return yaml.safe_dump(value, sort_keys=False, allow_unicode=unicode)
    except (yaml.YAMLError, RecursionError):
        return "{}"


@st.composite
def mutated_yaml(draw: st.DrawFn, text: str) -> bytes:
    """YAML ``text`` with a value replaced, deleted or added, a hostile snippet inserted, or its bytes mutated."""
    how = draw(st.sampled_from(["value", "value", "value", "snippet", "bytes"]))
    if how == "bytes":
        return draw(mutated_bytes(text.encode()))
    if how == "snippet":
        lines = text.splitlines()
        index = draw(st.integers(0, len(lines)))
        snippet = draw(st.sampled_from(YAML_SNIPPETS))
        if draw(st.booleans()) and index < len(lines) and ":" in lines[index]:  # as a value of an existing key
            lines[index] = lines[index].split(":", 1)[0] + ": " + snippet
        else:
            lines.insert(index, snippet)
        return "\n".join(lines).encode("utf-8", "surrogatepass")
    document = yaml.safe_load(text)
    path = draw(st.sampled_from(_paths(document)))
    change = draw(st.sampled_from(["replace", "replace", "delete", "add key"]))
    if change == "delete" and path:
        document = _delete(document, path)
    elif change == "add key" and isinstance(document, dict):
        document = {**document, draw(st.text(max_size=12)): draw(yaml_objects)}
    else:
        document = _replace(document, path, draw(yaml_objects))
    return _dump_yaml(document, draw(st.booleans())).encode("utf-8", "surrogatepass")


random_yaml = st.one_of(st.builds(_dump_yaml, yaml_objects, st.booleans()).map(str.encode),
                        st.sampled_from(YAML_SNIPPETS).map(lambda s: s.encode("utf-8", "surrogatepass")))


# ------------------------------------------------------------------ strategies: command lines


def command_parsers() -> dict[str, Any]:
    """Every command's argparse parser, by its words (``score``, ``import cord``, ...)."""
    import argparse

    from rpa_sim.cli.parser import build_parser

    def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return dict(actions[0].choices) if actions else {}

    found = {}
    for name, parser in subcommands(build_parser()).items():
        inner = subcommands(parser)
        found.update({f"{name} {sub}": subparser for sub, subparser in inner.items()} if inner else {name: parser})
    return found


COMMANDS = tuple(command_parsers())
# examples per command in the default run: commands that run a whole scenario take a second or more each
EXAMPLES = {"demo": 2, "run": 10, "report": 6, "staff": 20, "dashboard": 6}
DEFAULT_EXAMPLES = 15
#: Examples per command in the slow run, a tenth of them for the commands that run a whole scenario.
SLOW_EXAMPLES = 300
_SCENARIO_COMMANDS = ("demo", "run", "report")


def _one_in(n: int) -> st.SearchStrategy[bool]:
    """True one time in ``n``; hypothesis's simplest example (the one it tries first) is False."""
    return st.integers(0, n - 1).map(lambda drawn: drawn == n - 1)


# staff's queue, described by flags when no SCENARIO is given (argparse cannot say "required without SCENARIO")
_STAFF_QUEUE = ("arrivals_per_hour", "handle_seconds", "answer_within")


class _Builder:
    """Draws one :class:`Invocation` of a command: the files it reads and the values of its arguments."""

    def __init__(self, draw: st.DrawFn, command: str, material: Material) -> None:
        self.draw, self.command, self.material = draw, command, material
        self.invocation = Invocation(argv=command.split())

    def file(self, name: str, content: st.SearchStrategy[bytes]) -> str:
        if name not in self.invocation.files:
            self.invocation.files[name] = self.draw(content)
        return name

    def records(self, name: str) -> str:
        seeds = [self.material.receipts, self.material.questions]
        return self.file(name, st.one_of(*[near_valid(seed) for seed in seeds], any_bytes(),
                                         st.just(self.material.receipts + self.material.questions),
                                         st.just(self.material.log)))

    def data(self) -> str:
        kind = self.draw(st.sampled_from(["records", "records", "records", "gzip", "table", "shards", "glob",
                                          "missing", "text", "device", "folder"]))
        if kind == "records":
            return self.records(self.draw(st.sampled_from(["data.jsonl", "data.parquet", "data"])))
        if kind == "gzip":
            self.records("plain.jsonl")
            return self.file("data.jsonl.gz", st.just(gzip.compress(self.invocation.files.pop("plain.jsonl"),
                                                                    mtime=0)))
        if kind == "table":
            return self.file("table.parquet", st.one_of(st.just(self.material.table),
                                                        mutated_bytes(self.material.table),
                                                        st.sampled_from(self.material.tables_with_hostile_metadata)))
        if kind in ("shards", "glob"):
            for index in range(self.draw(st.integers(1, 3))):
                self.records(f"shards/part-{index}.jsonl")
            if self.draw(st.booleans()):
                self.file("shards/table.parquet", st.just(self.material.table))
            return "shards" if kind == "shards" else self.draw(st.sampled_from(["shards/*.jsonl", "shards/*",
                                                                                "shards/**", "shards/[", "*"]))
        if kind == "missing":
            return "missing.jsonl"
        if kind == "device":
            return self.draw(st.sampled_from(["/dev/null", "/dev/zero", "/dev/urandom", "/dev/stdin",
                                              "/proc/self/maps"]))
        if kind == "folder":
            return "."
        return self.draw(texts)

    def yaml_file(self, name: str, seeds: list[str]) -> str:
        return self.file(name, st.one_of(*[st.just(s.encode()) for s in seeds[:1]],
                                         st.sampled_from(seeds).flatmap(mutated_yaml), random_yaml, any_bytes()))

    def policy(self) -> str:
        kind = self.draw(st.sampled_from(["file", "file", "bundled", "text"]))
        if kind == "bundled":
            return self.draw(st.sampled_from([*self.material.policies, "nope", "policies/confidence"]))
        if kind == "text":
            return self.draw(texts)
        return self.yaml_file(self.draw(st.sampled_from(["policy.yaml", "p.yml", "rules/p"])),
                              list(self.material.policies.values()))

    def scenario(self) -> str:
        # a bundled name runs its full scenario (a thousand documents and more): seconds, so one time in ten
        kind = self.draw(st.sampled_from(["file"] * 8 + ["bundled", "text"]))
        if kind == "bundled":
            bundled = [name for name in self.material.scenarios if not name.startswith("beside")]
            return self.draw(st.sampled_from([*bundled, "nope"]))
        if kind == "text":
            return self.draw(texts)
        # a scenario may read records and policies beside it, by these names
        if self.draw(st.booleans()):
            self.records("data.jsonl")
        if self.draw(st.booleans()):
            self.yaml_file("policy.yaml", list(self.material.policies.values()))
        return self.yaml_file("scenario.yaml", list(self.material.scenarios.values()))

    def source(self) -> str:
        """The SRC of an import format: its valid source, mutated, or something else entirely."""
        files = self.material.importer_sources.get(self.command.split()[1], {})
        for name, content in files.items():
            if not name.startswith("predictions/"):
                self.file(name, near_valid(content) if content[:1] in b"[{" else mutated_bytes(content))
        single = [name for name in files if name.startswith("src/") and name.count("/") == 1]
        choices = ["src", *single, "missing", "text"]
        kind = self.draw(st.sampled_from(choices))
        if kind == "missing":
            return "src/missing.json"
        if kind == "text":
            return self.draw(texts)
        if kind == "src" and not files:
            return self.file("src/random.json", any_bytes())
        return kind

    def predictions(self) -> str:
        if self.command.startswith("import"):
            files = self.material.importer_sources.get(self.command.split()[1], {})
            found = [name for name in files if name.startswith("predictions/")]
            for name in found:
                self.file(name, near_valid(files[name]))
            if found and self.draw(st.booleans()):
                return "predictions" if len(found) > 1 or self.command == "import cord" else found[0]
        return self.records(self.draw(st.sampled_from(["pred.jsonl", "data.jsonl"])))

    def output(self) -> str:
        """A file or folder to write: a fresh name, or one of the inputs' names, or any text, inside the folder."""
        kind = self.draw(st.sampled_from(["fresh"] * 5 + ["input", "text", "number"]))
        name = self.draw({
            "fresh": st.sampled_from(["out.csv", "out.jsonl", "out.jsonl.gz", "out.parquet", "out.html", "out.yaml",
                                      "new/deeper/out.jsonl", "outdir", "outdir/", "tables/", "."]),
            "input": st.sampled_from(["data.jsonl", "policy.yaml", "scenario.yaml", "log.jsonl", "src", "shards",
                                      "table.parquet", "plan.yaml", "settings.yaml"]),
            "text": texts.map(lambda text: _normal(text) or "empty"), "number": numbers.map(_normal)}[kind])
        if name == ".." or name.startswith("../"):  # stay inside the working folder
            name = "escaped"
        self.invocation.outputs.append(name)
        return name

    def value(self, action: Any, flag: str | None) -> str:
        """A value for ``action`` (named ``flag``, None for a positional argument), right in kind or not."""
        dest, draw = action.dest, self.draw
        if dest in ("out", "out_dir", "png_dir", "review_log") or (dest == "log" and flag is not None):
            return self.output()
        if dest == "n" and self.command == "generate":
            # a valid count is legitimate work (a minute for a few million records): only small ones are run
            candidate = draw(st.one_of(texts, numbers, plausible_numbers))
            return "20" if _accepts(action, candidate) and action.type(candidate) > 10_000 else candidate
        # anything at all, one time in seven: more often, and hardly an example would get past the parser
        if draw(_one_in(7)):
            return draw(st.one_of(texts, numbers))
        if dest == "data":
            return self.data()
        if dest == "predictions":
            return self.predictions()
        if dest == "policy":
            return self.policy()
        if dest == "scenario":
            return self.scenario()
        if dest == "source":
            return self.source() if self.command.startswith("import") else self.scenario()
        if dest == "settings":
            settings_seeds = ["error_scale: 0.5\nconfidence:\n  mode: over_confident\n", "{}\n"]
            return self.yaml_file("settings.yaml", settings_seeds)
        if dest == "audit_plan":
            return self.yaml_file("plan.yaml", [self.material.plan.decode()])
        if dest == "mapping":
            return self.yaml_file("mapping.yaml", [MAPPING_FILE])
        if dest == "log" and flag is None:
            return self.file(draw(st.sampled_from(["log.jsonl", "log.jsonl.gz", "log"])),
                             st.one_of(near_valid(self.material.log), any_bytes(),
                                       st.just(gzip.compress(self.material.log, mtime=0))))
        if dest == "thresholds":
            return draw(st.one_of(st.sampled_from(["exact", "linspace:0:1:11", "0.2,0.5,0.9"]), thresholds))
        if dest == "scheduler":
            return draw(schedulers)
        if action.choices is not None:
            return draw(st.sampled_from(list(action.choices)))
        if dest == "shortlist":
            return draw(st.one_of(texts, st.lists(texts, max_size=4).map(",".join)))
        if dest == "workers":  # a pool of a million workers is a known runaway, with its own tests
            return draw(st.sampled_from(["1", "2"]))
        # a number the option takes: the edges of its range, and values near them
        candidate = draw(st.one_of(plausible_numbers, numbers))
        if _accepts(action, candidate):
            return candidate
        return next((text for text in _EVERYDAY_NUMBERS if _accepts(action, text)), candidate)

    def included(self, action: Any, exclusive: dict[int, Any], chosen: dict[int, Any], scenario_given: bool) -> bool:
        """Whether the command line gets option ``action``: the odds make most examples get past the parser."""
        group = exclusive.get(id(action))
        if group is not None and chosen[id(group)] not in (None, action):
            return False  # one option of a mutually exclusive group; one time in ten (None), any of them
        if action.dest in _STAFF_QUEUE:  # staff: a SCENARIO, or the queue's flags
            return self.draw(_one_in(10) if scenario_given else _one_in(10).map(operator.not_))
        if action.required or (group is not None and group.required):
            return self.draw(_one_in(20).map(operator.not_))
        # --scheduler starts Dask, seconds for nothing in a test of inputs
        return self.draw(_one_in(20 if action.dest == "scheduler" else 4))

    def arguments(self, parser: Any) -> None:
        import argparse

        exclusive = {id(action): group for group in parser._mutually_exclusive_groups
                     for action in group._group_actions}
        chosen = {id(group): None if self.draw(_one_in(10)) else self.draw(st.sampled_from(group._group_actions))
                  for group in parser._mutually_exclusive_groups}
        positionals, options = [], []
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            if not action.option_strings:
                # an optional positional (staff's SCENARIO) half the time, a required one nearly always
                if self.draw(st.booleans() if action.nargs == "?" else _one_in(20).map(operator.not_)):
                    positionals.append(self.value(action, None))
                continue
            if not self.included(action, exclusive, chosen, scenario_given=bool(positionals)):
                continue
            flag = self.draw(st.sampled_from(action.option_strings))
            if action.nargs == 0:
                options.append([flag])
            elif self.draw(_one_in(10)):
                options.append([f"{flag}={self.value(action, flag)}"])
            else:
                options.append([flag, self.value(action, flag)])
        if self.draw(_one_in(20)):
            options.append([self.draw(st.one_of(texts, st.sampled_from(["--help", "-h", "--version", "--", "-"])))])
        options = self.draw(st.permutations(options)) if len(options) > 1 else options
        self.invocation.argv += positionals + [word for option in options for word in option]
        words = [word.split("=", 1)[-1] for word in self.invocation.argv]
        inputs = [word for word in words if word not in self.invocation.outputs and (
            word in self.invocation.files or any(name.startswith(word.rstrip("/") + "/")
                                                 for name in self.invocation.files))]
        # a scenario reads the records and the policy beside it that it names
        scenario = self.invocation.files.get("scenario.yaml", b"") if "scenario.yaml" in inputs else b""
        self.invocation.inputs = inputs + [name for name in ("data.jsonl", "policy.yaml") if name.encode() in scenario]
        if any(word.startswith("shards/") for word in self.invocation.argv):
            self.invocation.inputs.append("shards")


@st.composite
def invocations(draw: st.DrawFn, command: str, material: Material) -> Invocation:
    """A command line of ``command`` with hostile arguments, and the files it names."""
    builder = _Builder(draw, command, material)
    builder.arguments(command_parsers()[command])
    return builder.invocation


# ------------------------------------------------------------------ the tests


def _settings(examples: int, *, explore: bool) -> settings:
    # no shrinking: an example costs a process (up to a minute), and a failure prints its whole invocation
    return settings(max_examples=examples, deadline=None, derandomize=not explore, database=None,
                    phases=(Phase.explicit, Phase.generate), print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.large_base_example, HealthCheck.filter_too_much])


def _check_command(command: str, material: Material, examples: int, *, explore: bool) -> None:
    @_settings(examples, explore=explore)
    @given(invocation=invocations(command, material))
    def every_example(invocation: Invocation) -> None:
        check(invocation)

    every_example()


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "dashboard"])
def test_hostile_input(command, material):
    _check_command(command, material, EXAMPLES.get(command, DEFAULT_EXAMPLES), explore=False)


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "dashboard"])
def test_hostile_input_explored(command, material):
    examples = SLOW_EXAMPLES // 10 if command in _SCENARIO_COMMANDS else SLOW_EXAMPLES
    _check_command(command, material, examples, explore=True)


@_settings(EXAMPLES["dashboard"], explore=False)
@given(data=st.data())
def test_dashboard_refuses_without_a_terminal(data, material):
    invocation = data.draw(invocations("dashboard", material))
    folder = Path(tempfile.mkdtemp(prefix="rpa-sim-hostile-"))
    try:
        invocation.write(folder)
        before = snapshot(folder)
        outcome = run_forked(invocation.argv, folder)
        after = snapshot(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert problems(invocation, outcome, before, after) == []
    # it never starts the app: --help is its only success, and a usable command line gets the refusal
    assert outcome.status != 0 or outcome.stdout.startswith(b"usage:")


def test_dashboard_refusal_is_one_line(material, tmp_path):
    outcome = run_forked(["dashboard", "receipts-demo"], tmp_path)
    assert outcome.status == 2
    assert outcome.stderr.decode().startswith("rpa-sim: error: dashboard: needs a terminal, ")
    assert outcome.stderr.count(b"\n") == 1 and list(tmp_path.iterdir()) == []


@_settings(4, explore=False)
@given(data=st.data())
def test_hostile_input_to_the_console_script(data, material):
    """The process entry point: the console script, its encoding of argv and its exit status."""
    command = data.draw(st.sampled_from(["score", "sweep", "estimate", "staff", "import dude", "generate"]))
    check(data.draw(invocations(command, material)), runner=run_console_script)


def test_the_limits_leave_room_for_a_real_run(material, tmp_path):
    """numpy, scipy, pyarrow and matplotlib work under :data:`MEMORY_LIMIT`: a failure here is the limit's."""
    (tmp_path / "r.jsonl").write_bytes(material.receipts)
    (tmp_path / "s.yaml").write_text(material.scenarios["docvqa-demo"])
    for argv in (["evaluate", "r.jsonl", "--out", "t.parquet"], ["sweep", "t.parquet", "--policy", "confidence"],
                 ["report", "s.yaml", "--out", "r.html", "--png-dir", "png"]):
        outcome = run_forked(argv, tmp_path)
        assert outcome.status == 0, outcome.stderr.decode()


def test_a_runaway_child_is_killed_and_reported(tmp_path):
    """The harness itself: a child that outlives the timeout is killed, with its process group."""
    outcome = run_forked(["staff", "--arrivals-per-hour", "1", "--handle-seconds", "1", "--reviewers", "1",
                          "--answer-within", "1"], tmp_path, timeout=0)
    assert outcome.timed_out and outcome.leftover_processes == []


def test_a_process_left_behind_is_named_and_killed(monkeypatch):
    """The harness itself: what is left in a command's process group is reported, then killed."""
    monkeypatch.setattr(sys.modules[__name__], "PROCESS_GRACE", 0.2)
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        left = _wait_for_group(process.pid)
        assert process.wait(timeout=10) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
    assert len(left) == 1 and left[0].startswith(f"{process.pid} sleep (")


# ------------------------------------------------------------------ regressions: what the hostile runs found


def _run_in(folder: Path, argv: list[str]) -> tuple[Outcome, str]:
    outcome = run_forked(argv, folder)
    assert outcome.leftover_processes == [] and outcome.signal is None
    return outcome, outcome.stderr.decode()


@pytest.mark.parametrize(("argv", "message"), [
    (["score", "r.jsonl", "--format=--"],
     "score: argument --format: invalid choice: '--' (choose from 'table', 'csv', 'json') "
     "(see 'rpa-sim score --help')"),
    (["generate", "receipts", "--n=--", "--seed", "1", "--out", "x.jsonl"],
     "generate: argument --n: expected a whole number of records, got '--' (see 'rpa-sim generate --help')"),
    (["staff", "--arrivals-per-hour=--", "--handle-seconds", "1", "--reviewers", "1", "--answer-within", "1"],
     "staff: argument --arrivals-per-hour: expected a number > 0, got '--' (see 'rpa-sim staff --help')"),
])
def test_an_option_value_of_two_dashes_is_checked_like_any_other(argv, message, material, tmp_path):
    # argparse (before 3.12) handed --format=-- to the command as [], unchecked: a traceback
    (tmp_path / "r.jsonl").write_bytes(material.receipts)
    outcome, stderr = _run_in(tmp_path, argv)
    assert (outcome.status, outcome.stdout, stderr) == (2, b"", f"rpa-sim: error: {message}\n")
    assert [p.name for p in tmp_path.iterdir()] == ["r.jsonl"]
    assert (tmp_path / "r.jsonl").read_bytes() == material.receipts


def test_an_output_named_two_dashes_is_written(material, tmp_path):
    (tmp_path / "r.jsonl").write_bytes(material.receipts)
    outcome, stderr = _run_in(tmp_path, ["sweep", "r.jsonl", "--policy", "confidence", "--format", "csv",
                                         "--out=--"])
    assert (outcome.status, outcome.stdout, stderr) == (0, b"", "wrote --\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["--", "r.jsonl"]
    assert (tmp_path / "--").read_text().startswith("policy,threshold,")
    assert (tmp_path / "r.jsonl").read_bytes() == material.receipts


@pytest.mark.parametrize(("argv", "message"), [
    (["dashboard", "--export-dir", "exports"],
     "dashboard: needs a terminal, and standard input or output is not one; 'rpa-sim run SCENARIO' prints the "
     "comparison as text"),
    (["run", "missing.yaml", "--out", "results"], "missing.yaml: no such file"),
    (["report", "receipts-demo", "--out", "r.html", "--png", "plots", "--png-dir", "plots"],
     "report: argument --png-dir: not allowed with argument --png (see 'rpa-sim report --help')"),
])
def test_a_failure_with_a_deprecated_spelling_is_one_line(argv, message, tmp_path):
    # the deprecation warning used to come first, making the failure two lines
    outcome, stderr = _run_in(tmp_path, argv)
    assert (outcome.status, stderr) == (1 if argv[0] == "run" else 2, f"rpa-sim: error: {message}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("png_dir", ["report.html", "report.html/plots", "plots/../report.html"])
def test_report_refuses_plots_in_its_own_html_file(png_dir, material, tmp_path):
    # the HTML was written, then the plots' folder could not be made where it stood: exit 1 with the HTML left
    (tmp_path / "s.yaml").write_text(material.scenarios["receipts-demo"])
    outcome, stderr = _run_in(tmp_path, ["report", "s.yaml", "--out", "report.html", "--png-dir", png_dir])
    assert (outcome.status, outcome.stdout, stderr) == (
        2, b"", f"rpa-sim: error: report: --png-dir {png_dir} is the --out file report.html or inside it; the plots "
                f"need a folder of their own\n")
    assert [p.name for p in tmp_path.iterdir()] == ["s.yaml"]
    assert (tmp_path / "s.yaml").read_text() == material.scenarios["receipts-demo"]


def test_report_writes_its_html_inside_the_plots_folder(material, tmp_path):
    (tmp_path / "s.yaml").write_text(material.scenarios["receipts-demo"])
    outcome, stderr = _run_in(tmp_path, ["report", "s.yaml", "--out", "plots/report.html", "--png-dir", "plots"])
    assert (outcome.status, stderr) == (0, "wrote plots/report.html\n")
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == [
        "calibration.png", "cost.png", "decision.png", "report.html", "tradeoff.png"]
