"""A user's mistake ends in one line ``rpa-sim: error: ...`` (exit 1 bad input, 2 bad usage), never a traceback,
and leaves no file behind (issue 9, part 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import alive, children, kill_group, send_signal, shared_path, write_lines
from tests.conftest import run_cli as run

KIE_LINE = {"id": "r1", "ground_truth": {"entities": [{"key": "a", "value": "x"}]},
            "prediction": {"entities": [{"key": "a", "value": "x", "confidence": 0.9}]}}
VQA_LINE = {"id": "q1", "answers": ["12"], "prediction": {"answer": "12", "confidence": 0.9}}



def one_error(err: str) -> str:
    """The message of the single error line on stderr."""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("rpa-sim: error: "), err
    return err.removeprefix("rpa-sim: error: ").removesuffix("\n")


def files_under(folder: Path) -> list[str]:
    """Every file and folder under ``folder``, hidden ones included, relative."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))



@pytest.fixture
def kie(tmp_path):
    return write_lines(tmp_path / "kie.jsonl", KIE_LINE)


@pytest.fixture
def vqa(tmp_path):
    return write_lines(tmp_path / "vqa.jsonl", VQA_LINE)


# --------------------------------------------------------------------------- metric options


@pytest.mark.parametrize(("argv", "message"), [
    (["--alpha", "2"], "score: argument --alpha: expected a number in [0, 1], got '2' (see 'rpa-sim score --help')"),
    (["--alpha", "nan"], "score: argument --alpha: expected a number in [0, 1], got 'nan' "
                         "(see 'rpa-sim score --help')"),
    (["--value-match", "fuzzy"], "score: argument --value-match: invalid choice: 'fuzzy' (choose from 'exact', "
                                 "'normalized') (see 'rpa-sim score --help')"),
])
def test_metric_options_are_checked_on_the_command_line(capsys, vqa, argv, message):
    status, out, err = run(capsys, "score", vqa, *argv)
    assert (status, out, one_error(err)) == (2, "", message)


@pytest.mark.parametrize("option", ["--miss-rate", "--false-correction-rate"])
def test_reviewer_rates_are_checked_on_the_command_line(capsys, kie, option):
    status, out, err = run(capsys, "sweep", kie, "--policy", "confidence", option, "1.5")
    assert (status, out) == (2, "")
    assert one_error(err) == (f"sweep: argument {option}: expected a number in [0, 1], got '1.5' "
                              "(see 'rpa-sim sweep --help')")


def test_an_option_of_the_other_task_is_an_error(capsys, kie, vqa):
    status, out, err = run(capsys, "score", kie, "--alpha", "0.5")
    assert (status, out) == (2, "")
    assert one_error(err) == f"--alpha applies to VQA data only, and the task is KIE (inferred from {kie})"
    status, out, err = run(capsys, "sweep", vqa, "--policy", "confidence", "--value-match", "normalized")
    assert (status, out) == (2, "")
    assert one_error(err) == f"--value-match applies to KIE data only, and the task is VQA (inferred from {vqa})"
    status, _, err = run(capsys, "certify", kie, "--task", "kie", "--alpha", "0.5", "--max-error", "0.1",
                         "--delta", "0.1")
    assert status == 2 and one_error(err) == "--alpha applies to VQA data only, and the task is KIE (--task)"


def test_the_options_of_the_task_apply(capsys, kie, vqa):
    status, out, _ = run(capsys, "score", vqa, "--alpha", "0.5", "--json")
    assert status == 0 and json.loads(out)["alpha"] == 0.5
    status, out, _ = run(capsys, "score", kie, "--value-match", "normalized", "--json")
    assert status == 0 and json.loads(out)["value_match"] == "normalized"


# --------------------------------------------------------------------------- outputs


def test_out_in_a_missing_folder_is_created_for_every_command(capsys, tmp_path, kie):
    commands = {
        "sweep": ["sweep", kie, "--policy", "confidence", "--format", "csv", "--out"],
        "generate": ["generate", "receipts", "--n", "3", "--seed", "1", "--workers", "1", "--out"],
        "import": ["import", "textract-expense", shared_path("data", "textract"), "--out"],
    }
    for name, argv in commands.items():
        target = tmp_path / name / "deeper" / "out.jsonl"
        status, out, err = run(capsys, *argv, target)
        assert status == 0 and out == "" and target.is_file(), err
        assert err.startswith("wrote ") and str(target) in err.splitlines()[0]
        assert files_under(tmp_path / name) == ["deeper", "deeper/out.jsonl"]


def test_a_failed_import_creates_nothing(capsys, tmp_path):
    missing = tmp_path / "missing-source"
    status, _, err = run(capsys, "import", "textract-expense", missing, "--out", tmp_path / "new" / "out.jsonl")
    assert (status, one_error(err)) == (1, f"{missing}: no such file or folder")
    assert files_under(tmp_path) == []


def test_report_out_in_a_missing_folder(capsys, tmp_path):
    target = tmp_path / "new" / "report.html"
    status, out, err = run(capsys, "report", "receipts-demo", "--out", target)
    assert (status, out, err) == (0, "", f"wrote {target}\n") and target.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("argv", [
    ["sweep", "{kie}", "--policy", "confidence", "--out"],
    ["generate", "receipts", "--n", "3", "--seed", "1", "--out"],
    ["import", "dude", "{kie}", "--out"],
    ["report", "receipts-demo", "--out"],
])
def test_out_that_is_a_folder_is_refused_before_any_work(capsys, tmp_path, kie, argv):
    folder = tmp_path / "folder"
    folder.mkdir()
    before = files_under(tmp_path)
    status, out, err = run(capsys, *[str(kie) if a == "{kie}" else a for a in argv], folder)
    command = " ".join(argv[:2] if argv[0] == "import" else argv[:1])
    assert (status, out, one_error(err)) == (2, "", f"{command}: argument --out: '{folder}' is a folder, not a file "
                                                    f"(see 'rpa-sim {command} --help')")
    assert files_under(tmp_path) == before


def test_out_below_a_file_is_refused(capsys, tmp_path, kie):
    blocker = tmp_path / "file"
    blocker.write_text("")
    status, _, err = run(capsys, "sweep", kie, "--policy", "confidence", "--out", blocker / "out.csv")
    assert status == 1
    assert one_error(err) == f"{blocker / 'out.csv'}: cannot be created: {blocker} is a file, not a folder"


def test_run_out_dir_that_is_a_file(capsys, tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: tiny\ndata: {generate: receipts, n: 5, seed: 1}\npolicies: [confidence]\n")
    blocker = tmp_path / "results"
    blocker.write_text("")
    for option in ("--out-dir", "--out"):
        status, out, err = run(capsys, "run", scenario, option, blocker)
        assert (status, out, one_error(err)) == (2, "", f"run: argument {option}: '{blocker}' is a file, not a folder "
                                                        f"(see 'rpa-sim run --help')")
    assert files_under(tmp_path) == ["results", "s.yaml"]


def test_report_png_dir_that_is_a_file_writes_no_html(capsys, tmp_path):
    blocker = tmp_path / "png"
    blocker.write_text("")
    status, out, err = run(capsys, "report", "receipts-demo", "--out", tmp_path / "r.html", "--png-dir", blocker)
    assert (status, out, one_error(err)) == (2, "", f"report: argument --png-dir: '{blocker}' is a file, not a "
                                                    f"folder (see 'rpa-sim report --help')")
    assert files_under(tmp_path) == ["png"]


# --------------------------------------------------------------------------- deeply nested JSON

DEEP = 100_000


def deep_line(record_id: str) -> str:
    return json.dumps({"id": record_id, **{k: v for k, v in KIE_LINE.items() if k != "id"}})[:-1] \
        + ', "x": ' + "[" * DEEP + "]" * DEEP + "}"


def test_json_nested_thousands_deep_is_a_record_error(capsys, tmp_path):
    data = write_lines(tmp_path / "deep.jsonl", KIE_LINE, deep_line("r2"))
    status, out, err = run(capsys, "score", data)
    assert (status, out, one_error(err)) == (1, "", f"{data}: line 2: invalid JSON: nested too deeply")
    status, out, err = run(capsys, "score", data, "--skip-invalid", "--json")
    assert status == 0 and json.loads(out)["documents"] == 1 and json.loads(out)["skipped"] == 1
    assert err == f"rpa-sim: skipped 1 record: 1 invalid JSON\n  {data}: line 2: invalid JSON: nested too deeply\n"


def test_json_nested_deeper_than_the_validator_allows(capsys, tmp_path):
    depth = 500  # below Python's recursion limit, above pydantic's
    line = json.dumps(KIE_LINE)[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}"
    data = write_lines(tmp_path / "deep.jsonl", line)
    status, _, err = run(capsys, "score", data)
    column = len(json.dumps(KIE_LINE)[:-1] + ', "x": ') + 201
    assert (status, one_error(err)) == (1, f"{data}: line 1 (id r1): invalid JSON: nested too deeply at column "
                                           f"{column}")


def test_deep_predictions_file(capsys, tmp_path):
    truth = write_lines(tmp_path / "truth.jsonl", {"id": "r1", "ground_truth": KIE_LINE["ground_truth"]})
    predictions = write_lines(tmp_path / "pred.jsonl",
                              "{\"id\": \"r1\", \"prediction\": " + "[" * DEEP + "]" * DEEP + "}")
    status, _, err = run(capsys, "score", truth, "--predictions", predictions)
    assert (status, one_error(err)) == (1, f"{predictions}: line 1: invalid JSON: nested too deeply")


def test_import_dude_nested_thousands_deep(capsys, tmp_path):
    source = tmp_path / "dude.json"
    source.write_text("[" * DEEP + "]" * DEEP)
    status, _, err = run(capsys, "import", "dude", source, "--out", tmp_path / "out.jsonl")
    assert (status, one_error(err)) == (1, f"{source}: invalid JSON: nested too deeply")
    assert files_under(tmp_path) == ["dude.json"]


# --------------------------------------------------------------------------- YAML files


def test_policy_that_is_not_utf8(capsys, tmp_path, kie):
    policy = tmp_path / "latin.yaml"
    policy.write_bytes("name: caf\xe9\nreview_if: {confidence: sweep}\n".encode("latin-1"))
    status, _, err = run(capsys, "sweep", kie, "--policy", policy)
    assert (status, one_error(err)) == (1, f"{policy}: not UTF-8: byte 0xe9 at byte 10")


def test_yaml_nested_thousands_deep(capsys, tmp_path, kie):
    scenario = tmp_path / "deep.yaml"
    scenario.write_text("name: " + "[" * DEEP + "]" * DEEP + "\n")
    status, _, err = run(capsys, "run", scenario)
    assert (status, one_error(err)) == (1, f"{scenario}: not usable YAML: nested too deeply")
    status, _, err = run(capsys, "sweep", kie, "--policy", scenario)
    assert (status, one_error(err)) == (1, f"{scenario}: not usable YAML: nested too deeply")


def test_generate_settings_missing_or_a_folder(capsys, tmp_path):
    for settings, problem in ((tmp_path / "nope.yaml", "no such file"), (tmp_path, "is a folder, not a file")):
        status, _, err = run(capsys, "generate", "receipts", "--n", "3", "--seed", "1", "--out",
                             tmp_path / "o.jsonl", "--settings", settings)
        assert (status, one_error(err)) == (1, f"{settings}: {problem}")
    assert files_under(tmp_path) == []


def test_validation_messages_are_plain_and_give_the_line(capsys, tmp_path, kie):
    policy = tmp_path / "policy.yaml"
    policy.write_text("name: strict\n"
                      "review_if:\n"
                      "  any_of:\n"
                      "    - confidence: swep\n"
                      "    - grounding: {below: 0.5, missing: maybe}\n"
                      "audit: -1\n"
                      "escalte: document\n")
    status, _, err = run(capsys, "sweep", kie, "--policy", policy)
    assert status == 1
    assert one_error(err) == (
        f"{policy}: line 4: review_if.any_of[0].confidence: expected a number or 'sweep', got 'swep'; "
        "line 5: review_if.any_of[1].grounding.missing: expected 'review' or 'accept', got 'maybe'; "
        "line 6: audit: expected a number at least 0, got -1; "
        "line 7: escalte: not a known field (misspelt?)")
    policy.write_text("name: strict\nreview_if: {confidence: 1.5}\n")
    status, _, err = run(capsys, "sweep", kie, "--policy", policy)
    assert one_error(err) == f"{policy}: line 2: review_if.confidence: expected a number at most 1 or 'sweep', got 1.5"


def test_one_validation_problem_is_located_like_a_record_problem(capsys, tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\n"
                        "data:\n"
                        "  generate: receipts\n"
                        "  n: 0\n"
                        "policies: [confidence]\n")
    status, _, err = run(capsys, "run", scenario)
    assert (status, one_error(err)) == (1, f"{scenario}: line 4: data.n: expected a number at least 1, got 0")
    scenario.write_text("name: s\npolicies: [confidence]\n")
    status, _, err = run(capsys, "run", scenario)
    assert (status, one_error(err)) == (1, f"{scenario}: line 1: data: missing (required)")


# --------------------------------------------------------------------------- threshold grids


@pytest.mark.parametrize(("spec", "message"), [
    ("abc", "thresholds must be 'exact', 'linspace:START:STOP:NUM' or a comma list, got 'abc'"),
    ("linspace:0:1:x", "thresholds must be 'exact', 'linspace:START:STOP:NUM' or a comma list, got 'linspace:0:1:x'"),
    ("linspace:nan:1:3", "thresholds must be finite numbers, got 'linspace:nan:1:3'"),
    ("linspace:0:inf:3", "thresholds must be finite numbers, got 'linspace:0:inf:3'"),
    ("0.5,nan", "thresholds must be finite numbers, got '0.5,nan'"),
    ("-inf,0.5", "thresholds must be finite numbers, got '-inf,0.5'"),
])
def test_bad_threshold_grids(capsys, kie, spec, message):
    status, out, err = run(capsys, "sweep", kie, "--policy", "confidence", f"--thresholds={spec}")
    assert (status, out, one_error(err)) == (2, "", f"sweep: argument --thresholds: {message} "
                                                    f"(see 'rpa-sim sweep --help')")


def test_the_largest_grid_is_accepted(capsys, kie):
    status, out, _ = run(capsys, "sweep", kie, "--policy", "confidence", "--thresholds", "linspace:0:1:1000000",
                         "--format", "csv")
    assert status == 0 and len(out.splitlines()) == 1 + 1_000_000


# --------------------------------------------------------------------------- pipes


def test_data_from_a_pipe_asks_for_a_regular_file(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "rpa_sim.cli", "score", "/dev/stdin"],
                               input=json.dumps(KIE_LINE) + "\n", capture_output=True, text=True, timeout=120)
    assert (completed.returncode, completed.stdout) == (1, "")
    assert completed.stderr == ("rpa-sim: error: /dev/stdin: is not a regular file (a pipe or a device?): records "
                                "are read more than once, so save them to a file first\n")


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(capsys, tmp_path, kie):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for argv in (["score", fifo], ["score", kie, "--predictions", fifo]):
        status, _, err = run(capsys, *argv)
        assert status == 1 and one_error(err).startswith(f"{fifo}: is not a regular file")


# --------------------------------------------------------------------------- signals


@pytest.fixture
def start_writing(tmp_path: Path) -> Iterator[Callable[[int], subprocess.Popen]]:
    """Starts a generate command and waits until it writes its (large) output; the test then signals it.

    Whatever the test does, a process group still running at the end is killed: a test that fails
    leaves no generator behind.
    """
    started: list[subprocess.Popen] = []

    def start(workers: int) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-m", "rpa_sim.cli", "generate", "receipts", "--n", "2000000",
                                    "--seed", "1", "--workers", str(workers), "--out", str(tmp_path / "big.jsonl.gz")],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        started.append(process)
        deadline = time.monotonic() + 120
        while not any(p.stat().st_size > 0 for p in tmp_path.glob(".big.jsonl.gz.*.tmp")):
            assert process.poll() is None and time.monotonic() < deadline, "generate did not start writing"
            time.sleep(0.05)
        return process

    yield start
    for process in started:
        kill_group(process)


@pytest.mark.parametrize(("how", "status", "line"), [
    ("SIGTERM to the process", 143, "rpa-sim: terminated\n"),
    ("SIGINT to the process group", 130, "rpa-sim: interrupted\n"),
    ("SIGTERM to the process group", 143, "rpa-sim: terminated\n"),
])
@pytest.mark.slow
def test_a_signal_while_writing_leaves_nothing_behind(tmp_path, start_writing, how, status, line):
    process = start_writing(2)
    workers = children(process.pid)
    assert len(workers) >= 2
    send_signal(process, how)
    stdout, stderr = process.communicate(timeout=120)
    assert (process.returncode, stdout, stderr) == (status, "", line)
    assert files_under(tmp_path) == []
    assert not any(alive(pid) for pid in workers)


def test_a_signal_while_writing_in_one_process(tmp_path, start_writing):
    process = start_writing(1)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert (process.returncode, stdout, stderr) == (143, "", "rpa-sim: terminated\n")
    assert files_under(tmp_path) == []


def test_main_restores_the_sigterm_handler(capsys, kie):
    before = signal.getsignal(signal.SIGTERM)
    run(capsys, "score", kie)
    assert signal.getsignal(signal.SIGTERM) is before


# --------------------------------------------------------------------------- dashboard


def test_dashboard_without_a_terminal_refuses_at_once():
    completed = subprocess.run([sys.executable, "-m", "rpa_sim.cli", "dashboard"], stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=120)
    assert (completed.returncode, completed.stdout) == (2, "")
    assert completed.stderr == ("rpa-sim: error: dashboard: needs a terminal, and standard input or output is not "
                                "one; 'rpa-sim run SCENARIO' prints the comparison as text\n")


# --------------------------------------------------------------------------- empty tables

NOTHING = {"entities": [], "groups": []}


@pytest.fixture
def empty(tmp_path):
    """Two documents with nothing in them: an outcome table of no items."""
    return write_lines(tmp_path / "empty.jsonl", {"id": "d1", "ground_truth": NOTHING, "prediction": NOTHING},
                       {"id": "d2", "ground_truth": NOTHING, "prediction": NOTHING})


def test_score_of_an_empty_table(capsys, empty):
    status, out, _ = run(capsys, "score", empty, "--json")
    figures = json.loads(out)
    assert status == 0
    assert (figures["documents"], figures["entities_gt"], figures["entities_pred"]) == (2, 0, 0)
    assert figures["entity_f1"] is None and figures["kieval_aligned"] is None
    for fmt in ("table", "csv"):
        status, out, _ = run(capsys, "score", empty, "--format", fmt)
        assert status == 0 and out


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_sweep_of_an_empty_table(capsys, empty, fmt):
    status, out, err = run(capsys, "sweep", empty, "--policy", "confidence", "--format", fmt)
    assert status == 0, err
    if fmt == "json":
        rows = json.loads(out)
        assert rows and all(row["reviewed"] == 0 and row["documents_straight_through"] == 2 for row in rows)
        assert all(row["auto_rate"] is None and row["kieval_aligned"] is None for row in rows)


def test_certify_an_empty_table(capsys, empty):
    status, out, err = run(capsys, "certify", empty, "--max-error", "0.1", "--delta", "0.1", "--json")
    assert status == 0, err
    result = json.loads(out)
    assert result["threshold"] is None and result["calibration_n"] == 0


def test_run_json_on_a_scenario_whose_data_is_empty(capsys, tmp_path, empty):
    scenario = tmp_path / "empty.yaml"
    scenario.write_text(f"name: empty\ndata: {{file: {empty.name}}}\npolicies: [confidence]\ntargets: [0.9]\n"
                        "costs: {per_review: 0.1, per_residual_error: 1}\ncertify: {max_error: 0.1, delta: 0.1}\n")
    status, out, err = run(capsys, "run", scenario, "--json")
    assert status == 0, err
    summary = json.loads(out)
    assert summary["data"]["documents"] == 2 and summary["data"]["predictions"] == 0


def test_json_lines_nested_too_deeply_in_importer_sources(capsys, tmp_path):
    nested = "[" * DEEP + "]" * DEEP
    rows = tmp_path / "cord.jsonl"
    rows.write_text('{"ground_truth": ' + nested + "}\n")
    status, _, err = run(capsys, "import", "cord", rows, "--out", tmp_path / "cord-out.jsonl")
    assert (status, one_error(err)) == (1, f"{rows}: line 1 (id 0): invalid JSON: nested too deeply")
    embedded = tmp_path / "cord-string.jsonl"
    embedded.write_text(json.dumps({"ground_truth": nested}) + "\n")
    status, _, err = run(capsys, "import", "cord", embedded, "--out", tmp_path / "cord-out.jsonl")
    assert (status, one_error(err)) == (1, f"{embedded}: line 1 (id 0): ground_truth: invalid JSON in the string: "
                                           "nested too deeply")
    predictions = tmp_path / "docile-pred.jsonl"
    predictions.write_text('{"id": "a", "prediction": ' + nested + "}\n")
    status, _, err = run(capsys, "import", "docile", shared_path("data", "docile"), "--predictions", predictions,
                         "--out", tmp_path / "docile-out.jsonl")
    assert (status, one_error(err)) == (1, f"{predictions}: line 1: invalid JSON: nested too deeply")
    assert not list(tmp_path.glob("*-out.jsonl")) and not list(tmp_path.glob(".*.tmp"))
