"""Nothing lost (issue 20): an output never replaces an input, several files are written all or none, and a
failed write names the file the user asked for."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from pathlib import Path

import pytest

from rpa_sim import bundled
from rpa_sim.common import files
from rpa_sim.common.files import OutputIsInputError, all_or_nothing, atomic_write_files, refuse_overwriting_inputs
from rpa_sim.evaluate.local import evaluate_records, evaluation
from rpa_sim.evaluate.tablefile import write_table
from rpa_sim.records.readers import write_records
from rpa_sim.records.synthetic import generate_receipts
from tests.conftest import run_cli, shared_path


def no_space(*args) -> OSError:
    """The error of a full disk, about the file of the call that failed (its first argument)."""
    return OSError(errno.ENOSPC, "No space left on device", str(args[0]))


def no_hard_links(monkeypatch) -> None:
    def link(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted", str(args[0]))

    monkeypatch.setattr(os, "link", link)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file (its SHA-256), symlink (its target) and folder under ``folder``, hidden ones included."""
    shot = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            shot[name] = f"-> {os.readlink(path)}"
        elif path.is_dir():
            shot[name] = "folder"
        else:
            shot[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return shot


def one_error(err: str) -> str:
    """The message of the single error line on stderr."""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("rpa-sim: error: "), err
    return err.removeprefix("rpa-sim: error: ").removesuffix("\n")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A working folder with records, shards, an outcome table, a policy, scenarios and the other inputs."""
    monkeypatch.chdir(tmp_path)
    records = list(generate_receipts(12, seed=1))
    write_records(records, "ok.jsonl")
    for index in range(3):
        write_records(records[4 * index:4 * index + 4], f"shards/s{index}.jsonl")
    write_table(evaluate_records(records, evaluation("kie"), workers=1), "p.parquet")
    os.link("ok.jsonl", "hard.jsonl")
    os.symlink("ok.jsonl", "link.jsonl")
    policy = Path(bundled.resolve("policy", "confidence")).read_text().replace("name: confidence", "name: mine")
    Path("pol.yaml").write_text(policy)
    Path("s.yaml").write_text("name: small\ndata:\n  file: ok.jsonl\npolicies: [./pol.yaml, confidence]\n"
                              "targets: [0.9]\n")
    Path("sharded.yaml").write_text("name: sharded\ndata:\n  file: shards\npolicies: [confidence]\n")
    Path("joined.yaml").write_text("name: joined\ndata:\n  file: ok.jsonl\n  predictions: preds.jsonl\n"
                                   "policies: [confidence]\n")
    Path("preds.jsonl").write_text("{}\n")
    Path("set.yaml").write_text("{}\n")
    Path("plan.yaml").write_text("{}\n")
    Path("png").mkdir()
    os.link("ok.jsonl", "png/tradeoff.png")
    Path("res").mkdir()
    os.symlink("../pol.yaml", "res/summary.json")
    Path("model-outputs").mkdir()
    Path("model-outputs/receipt.json").write_text("{}\n")
    shutil.copy(shared_path("data", "textract", "analyze_expense_invoice.json"), "inv.json")
    shutil.copy(shared_path("data", "dude", "DUDE_demo_gt.json"), "g.json")
    shutil.copy(shared_path("data", "dude", "DUDE_demo_submission_perfect.json"), "sub.json")
    return tmp_path


# --------------------------------------------------------------------------- an output never replaces an input

POLICY = ["--policy", "confidence"]
AT = ["--threshold", "0.5"]
REFUSED = [
    (["replay", "ok.jsonl", *POLICY, *AT, "--seed", "0", "--log", "ok.jsonl"], "--log ok.jsonl is DATA ok.jsonl"),
    (["evaluate", "ok.jsonl", "--out", "ok.jsonl"], "--out ok.jsonl is DATA ok.jsonl"),
    (["sweep", "p.parquet", *POLICY, "--out", "p.parquet"], "--out p.parquet is DATA p.parquet"),
    (["sweep", "ok.jsonl", "--policy", "./pol.yaml", "--out", "pol.yaml"], "--out pol.yaml is --policy pol.yaml"),
    (["report", "s.yaml", "--out", "s.yaml"], "--out s.yaml is SCENARIO s.yaml"),
    (["report", "s.yaml", "--out", "ok.jsonl"], "--out ok.jsonl is the scenario's data ok.jsonl"),
    (["report", "s.yaml", "--out", "pol.yaml"], "--out pol.yaml is the scenario's policy pol.yaml"),
    (["report", "joined.yaml", "--out", "preds.jsonl"], "--out preds.jsonl is the scenario's predictions preds.jsonl"),
    (["report", "sharded.yaml", "--out", "shards/s1.jsonl"],
     "--out shards/s1.jsonl is the scenario's data shards/s1.jsonl"),
    (["report", "s.yaml", "--out", "r.html", "--png-dir", "png"],
     "--png-dir file png/tradeoff.png is the scenario's data ok.jsonl"),
    (["run", "s.yaml", "--out-dir", "res"], "--out-dir file res/summary.json is the scenario's policy pol.yaml"),
    (["generate", "receipts", "--n", "3", "--seed", "0", "--settings", "set.yaml", "--out", "set.yaml"],
     "--out set.yaml is --settings set.yaml"),
    (["plan-audit", "ok.jsonl", *POLICY, *AT, "--budget", "3", "--out", "ok.jsonl"],
     "--out ok.jsonl is DATA ok.jsonl"),
    (["replay", "ok.jsonl", *POLICY, *AT, "--seed", "0", "--audit-plan", "plan.yaml", "--log", "plan.yaml"],
     "--log plan.yaml is --audit-plan plan.yaml"),
    (["import", "textract-expense", "inv.json", "--out", "inv.json"], "--out inv.json is SRC inv.json"),
    (["import", "dude", "g.json", "--out", "g.json"], "--out g.json is SRC g.json"),
    (["import", "dude", "g.json", "--predictions", "sub.json", "--out", "sub.json"],
     "--out sub.json is --predictions sub.json"),
    (["import", "cord", "ok.jsonl", "--predictions", "model-outputs", "--out", "model-outputs/receipt.json"],
     "--out model-outputs/receipt.json is --predictions model-outputs/receipt.json"),
    (["import", "google-docai", "g.json", "--ground-truth", "set.yaml", "--out", "set.yaml"],
     "--out set.yaml is --ground-truth set.yaml"),
    (["import", "azure-di", "g.json", "--fields", "plan.yaml", "--out", "plan.yaml"],
     "--out plan.yaml is --fields plan.yaml"),
    # hard links and symlinks are the same file
    (["sweep", "ok.jsonl", *POLICY, "--out", "hard.jsonl"], "--out hard.jsonl is DATA ok.jsonl"),
    (["sweep", "ok.jsonl", *POLICY, "--out", "link.jsonl"], "--out link.jsonl is DATA ok.jsonl"),
    (["sweep", "hard.jsonl", *POLICY, "--out", "link.jsonl"], "--out link.jsonl is DATA hard.jsonl"),
    # every shard of a folder or a glob
    (["sweep", "shards", *POLICY, "--out", "shards/s2.jsonl"], "--out shards/s2.jsonl is DATA shards/s2.jsonl"),
    (["sweep", "shards/*.jsonl", *POLICY, "--out", "shards/s0.jsonl"],
     "--out shards/s0.jsonl is DATA shards/s0.jsonl"),
    # a partition folder replaced whole: it may not be, or hold, DATA's shards
    (["evaluate", "shards", "--out", "shards/"], "--out shards/ holds DATA shards/s0.jsonl"),
    (["evaluate", "shards/s1.jsonl", "--out", "shards/"], "--out shards/ holds DATA shards/s1.jsonl"),
]


@pytest.mark.parametrize(("argv", "message"), REFUSED,
                         ids=lambda value: " ".join(value) if isinstance(value, list) else "")
def test_an_output_that_is_an_input_is_refused_before_any_work(capsys, folder, argv, message):
    before = snapshot(folder)
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (2, "")
    assert one_error(err) == f"{message}: an output never replaces an input"
    assert snapshot(folder) == before  # the input unchanged, nothing written, no temporary


def test_a_bundled_policy_is_the_file_inside_the_package(capsys, folder, monkeypatch):
    # the package's own file stays out of reach of the test: a copy stands for the bundled folder
    Path("bundled").mkdir()
    shutil.copy(bundled.resolve("policy", "confidence"), "bundled/confidence.yaml")
    monkeypatch.setattr(bundled, "bundled_files", lambda kind: {"confidence": Path("bundled/confidence.yaml")})
    before = snapshot(folder)
    status, _, err = run_cli(capsys, "sweep", "ok.jsonl", *POLICY, "--out", "bundled/confidence.yaml")
    assert status == 2
    assert one_error(err) == ("--out bundled/confidence.yaml is --policy bundled/confidence.yaml: an output never "
                              "replaces an input")
    assert snapshot(folder) == before


def test_an_existing_output_that_is_no_input_is_replaced_as_before(capsys, folder):
    Path("curves.csv").write_text("old\n")
    status, _, err = run_cli(capsys, "sweep", "shards", *POLICY, "--format", "csv", "--out", "curves.csv")
    assert (status, err) == (0, "wrote curves.csv\n")
    assert Path("curves.csv").read_text().startswith("policy,threshold,")


def test_the_check_reads_the_inputs_only_when_an_output_exists():
    def inputs():
        raise AssertionError("read")
        yield  # pragma: no cover

    refuse_overwriting_inputs([("--out", "surely-absent/curves.csv")], inputs())


def test_the_refusal_is_an_output_is_input_error(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.jsonl").write_text("{}\n")
    with pytest.raises(OutputIsInputError, match=r"^--out .*data/ holds SRC .*a\.jsonl: an output never"):
        refuse_overwriting_inputs([("--out", f"{data}/")], [("SRC", data)])
    # named without the trailing separator, a folder is a file output, which no input file is
    refuse_overwriting_inputs([("--out", data)], [("SRC", data)])


# --------------------------------------------------------------------------- several files, all or none


def failing_on(monkeypatch, name: str, call: int, error, *, when=lambda *args: True) -> None:
    """Make ``os.NAME`` (or ``rpa_sim.common.files.NAME``) raise ``error(*args)`` on its ``call``-th call that ``when``
    accepts; the other calls do what they do."""
    owner = os if hasattr(os, name) else files
    real = getattr(owner, name)
    calls: list = []

    def fake(*args, **kwargs):
        if when(*args):
            calls.append(args)
            if len(calls) == call:
                raise error(*args)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, fake)


def staged(*args) -> bool:
    """A rename of a staged file into place (not an aside coming back)."""
    return str(args[0]).endswith(".tmp")


FAILURES = [("_write_file", 1), ("_write_file", 2), ("replace", 1), ("replace", 2)]


@pytest.mark.parametrize("hard_links", [True, False], ids=["hard links", "no hard links"])
@pytest.mark.parametrize(("step", "call"), FAILURES, ids=[f"{step} {call}" for step, call in FAILURES])
def test_a_failure_at_any_step_leaves_every_file_as_it_was(tmp_path, monkeypatch, step, call, hard_links):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").write_text("old a\n")
    (out / "b.json").write_text("old b\n")
    before = snapshot(tmp_path)
    if not hard_links:
        no_hard_links(monkeypatch)
    failing_on(monkeypatch, step, call, no_space, when=staged if step == "replace" else lambda *args: True)
    with pytest.raises(OSError, match="No space left on device"):
        atomic_write_files({out / "a.csv": b"new a\n", out / "b.json": b"new b\n", out / "c.txt": b"new c\n"})
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("hard_links", [True, False], ids=["hard links", "no hard links"])
def test_every_file_written_and_nothing_left_beside_them(tmp_path, monkeypatch, hard_links):
    if not hard_links:
        no_hard_links(monkeypatch)
    (tmp_path / "a.csv").write_text("old a\n")
    atomic_write_files({tmp_path / "a.csv": b"new a\n", tmp_path / "new" / "b.json": b"new b\n"})
    assert snapshot(tmp_path) == {"a.csv": hashlib.sha256(b"new a\n").hexdigest(), "new": "folder",
                                  "new/b.json": hashlib.sha256(b"new b\n").hexdigest()}


def test_the_folders_made_for_the_files_are_removed_when_one_fails(tmp_path, monkeypatch):
    failing_on(monkeypatch, "replace", 2, no_space, when=staged)
    with pytest.raises(OSError):
        atomic_write_files({tmp_path / "new" / "a.csv": b"a", tmp_path / "other" / "deep" / "b.csv": b"b"})
    assert snapshot(tmp_path) == {}


def test_an_interrupt_while_renaming_rolls_back_what_was_renamed(tmp_path, monkeypatch):
    (tmp_path / "a.csv").write_text("old a\n")
    before = snapshot(tmp_path)
    failing_on(monkeypatch, "replace", 2, lambda *args: KeyboardInterrupt(), when=staged)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_files({tmp_path / "a.csv": b"new a\n", tmp_path / "b.csv": b"new b\n"})
    assert snapshot(tmp_path) == before


def test_a_folder_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "part-00000.parquet").write_text("old\n")
    before = snapshot(tmp_path)
    failing_on(monkeypatch, "replace", 1, no_space, when=staged)
    with pytest.raises(OSError), all_or_nothing([tables]) as (stage,):
        stage.mkdir()
        (stage / "part-00000.parquet").write_text("new\n")
    assert snapshot(tmp_path) == before
    monkeypatch.undo()
    with all_or_nothing([tables]) as (stage,):
        stage.mkdir()
        (stage / "part-00001.parquet").write_text("new\n")
    assert snapshot(tmp_path) == {"tables": "folder",
                                  "tables/part-00001.parquet": hashlib.sha256(b"new\n").hexdigest()}


def test_an_error_names_the_target_never_the_staged_file(tmp_path, monkeypatch):
    def refused(source, target):
        raise PermissionError(errno.EACCES, "Permission denied", str(source), None, str(target))

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(PermissionError) as raised:
        atomic_write_files({tmp_path / "a.csv": b"a"})
    assert (raised.value.filename, raised.value.filename2) == (str(tmp_path / "a.csv"), str(tmp_path / "a.csv"))


def old_outputs(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"an earlier run's {name}\n")


@pytest.mark.parametrize(("step", "call"), [("_write_file", 2), ("replace", 2)])
def test_run_out_dir_writes_both_files_or_neither(capsys, folder, monkeypatch, step, call):
    old_outputs(folder, "out/curves.csv", "out/summary.json")
    before = snapshot(folder)
    failing_on(monkeypatch, step, call, no_space, when=staged if step == "replace" else lambda *args: True)
    status, out, err = run_cli(capsys, "run", "s.yaml", "--out-dir", "out")
    assert (status, out) == (1, "")
    assert one_error(err) == "out/summary.json: No space left on device"
    assert snapshot(folder) == before


def test_run_out_dir_leaves_no_new_folder_when_it_fails(capsys, folder, monkeypatch):
    before = snapshot(folder)
    failing_on(monkeypatch, "_write_file", 2, no_space)
    status, _, err = run_cli(capsys, "run", "s.yaml", "--out-dir", "new/out")
    assert status == 1
    assert one_error(err) == "new/out/summary.json: No space left on device"
    assert snapshot(folder) == before


def test_run_out_dir_interrupted_after_a_rename_rolls_it_back(capsys, folder, monkeypatch):
    old_outputs(folder, "out/curves.csv", "out/summary.json")
    before = snapshot(folder)
    failing_on(monkeypatch, "replace", 2, lambda *args: KeyboardInterrupt(), when=staged)
    status, _, err = run_cli(capsys, "run", "s.yaml", "--out-dir", "out")
    assert (status, err) == (130, "rpa-sim: interrupted\n")
    assert snapshot(folder) == before


def test_report_writes_no_html_when_a_png_fails(capsys, folder, monkeypatch):
    old_outputs(folder, "r.html")
    before = snapshot(folder)
    failing_on(monkeypatch, "replace", 1, lambda source, target: PermissionError(errno.EACCES, "Permission denied",
                                                                                 str(source), None, str(target)),
               when=lambda source, target: staged(source) and str(target).endswith(".png"))
    status, out, err = run_cli(capsys, "report", "s.yaml", "--out", "r.html", "--png-dir", "plots")
    assert (status, out) == (1, "")
    assert one_error(err) == "plots/decision.png: Permission denied"
    assert snapshot(folder) == before  # r.html as it was, and no plots folder


# --------------------------------------------------------------------------- a partitioned write names the target


def test_a_failed_partition_names_the_file_in_the_target_folder(capsys, folder, monkeypatch):
    import pyarrow.parquet as pq

    status, _, _ = run_cli(capsys, "evaluate", "shards", "--workers", "1", "--out", "tables/")
    assert status == 0
    before = snapshot(folder)
    real, calls = pq.write_table, []

    def third_fails(*args, **kwargs):
        calls.append(args)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(pq, "write_table", third_fails)
    status, out, err = run_cli(capsys, "evaluate", "shards", "--workers", "1", "--out", "tables/")
    assert (status, out) == (1, "")
    assert one_error(err) == "tables/part-00002.parquet: No space left on device"
    assert snapshot(folder) == before  # the earlier tables as they were, no hidden folder left
