"""The command line as one product (issue 9, part 4): formats, --out/--out-dir, stdout vs stderr, help texts,
CSV quoting, how counts and thresholds print, progress bars, the dashboard entry."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import subprocess
import sys

import pytest

import rpa_sim.cli.scenarios
import rpa_sim.tui
from tests.conftest import run_cli as run
from tests.conftest import write_lines

# Two receipts: r1 has a right value (confidence 1.0) and a wrong one (0.4); r2 a wrong one (0.6) and a
# missed one. KIEval: TP 1, substitutions 2, additions 1 (the missed value); KIEval_Aligned
# (N(PR*) + Add - errors) / (N(PR*) + Add) = (3 + 1 - 3) / 4.
TINY_KIE = [
    {"id": "r1", "ground_truth": {"entities": [{"key": "a", "value": "x"}, {"key": "b", "value": "y"}]},
     "prediction": {"entities": [{"key": "a", "value": "x", "confidence": 1.0},
                                 {"key": "b", "value": "z", "confidence": 0.4}]}},
    {"id": "r2", "ground_truth": {"entities": [{"key": "a", "value": "x"}, {"key": "c", "value": "q"}]},
     "prediction": {"entities": [{"key": "a", "value": "w", "confidence": 0.6}]}},
]
TINY_VQA = [
    {"id": "q1", "question": "How many?", "answers": ["12"], "prediction": {"answer": "12", "confidence": 0.9}},
    {"id": "q2", "question": "Where?", "answers": ["Paris"], "prediction": {"answer": "Lyon", "confidence": 0.3}},
]




@pytest.fixture
def kie(tmp_path):
    return write_lines(tmp_path / "tiny.jsonl", *TINY_KIE)


@pytest.fixture
def vqa(tmp_path):
    return write_lines(tmp_path / "tiny-vqa.jsonl", *TINY_VQA)


@pytest.fixture
def scenario(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: tiny\ndata: {generate: receipts, n: 20, seed: 1}\npolicies: [confidence, per-field]\n"
                    "costs: {per_review: 0.1, per_residual_error: 1}\ntargets: [0.9]\n")
    return path


# --------------------------------------------------------------------------- the default table format


def test_score_table_text(capsys, kie, vqa):
    status, out, err = run(capsys, "score", kie)
    assert (status, err) == (0, "")
    assert out == ("KIE, values compared exactly\n"
                   "  documents                           2\n"
                   "  entities (ground truth)             4\n"
                   "  entities (predicted)                3\n"
                   "  correct (TP)                        1\n"
                   "  substitutions                       2\n"
                   "  additions                           1\n"
                   "  deletions                           0\n"
                   "  KIEval entity F1               0.2857\n"
                   "  KIEval group F1                   n/a\n"
                   "  KIEval_Aligned                 0.2500\n"
                   "  group-level aligned               n/a\n"
                   "  entity F1, grouping-blind      0.2857\n")
    status, out, _ = run(capsys, "score", vqa)
    assert out == ("Document VQA\n"
                   "  questions                     2\n"
                   "  ANLS                     0.5000\n"
                   "  accuracy                 0.5000\n"
                   "  SMuDGE (alpha 0.25)         n/a\n"
                   "  match                    0.5000\n"
                   "  grounding                   n/a\n"
                   "  evidence IoU                n/a\n"
                   "  absolute deviation       0.0000\n")


def test_sweep_table_text(capsys, kie):
    status, out, err = run(capsys, "sweep", kie, "--policy", "confidence")
    assert (status, err) == (0, "")
    # reviewing the 0.4 value fixes r1's substitution: (4 - 2) / 4; then r2's too: (4 - 1) / 4
    assert out == (
        "    policy  threshold  auto_rate  reviewed  documents_straight_through  kieval_aligned  "
        "residual_substitutions  residual_deletions  additions\n"
        "confidence     0.0000     1.0000         0                           2          0.2500  "
        "                     2                   0          1\n"
        "confidence     0.4000     1.0000         0                           2          0.2500  "
        "                     2                   0          1\n"
        "confidence     0.6000     0.6667         1                           1          0.5000  "
        "                     1                   0          1\n"
        "confidence     1.0000     0.3333         2                           0          0.7500  "
        "                     0                   0          1\n"
        "confidence   >1 (all)     0.0000         3                           0          0.7500  "
        "                     0                   0          1\n")


def test_expected_counts_print_with_the_decimals_they_need(capsys, kie):
    status, out, _ = run(capsys, "sweep", kie, "--policy", "confidence", "--miss-rate", "0.5",
                         "--false-correction-rate", "0.25", "--thresholds", "0.6,2")
    # at 0.6 the 0.4 substitution is missed half the time: 1.5 left; at 2 every value is reviewed: the two
    # substitutions stay with 0.5 each, the right value breaks with 0.25
    assert status == 0
    assert [line.split()[-3] for line in out.splitlines()[1:]] == ["1.5", "1.25"]
    status, out, _ = run(capsys, "sweep", kie, "--policy", "confidence", "--miss-rate", "0.5",
                         "--false-correction-rate", "0.25", "--thresholds", "0.6,2", "--format", "csv")
    assert [row["residual_substitutions"] for row in csv.DictReader(io.StringIO(out))] == ["1.5", "1.25"]


def test_the_review_everything_threshold_keeps_its_exact_value_in_csv_and_json(capsys, kie):
    _, out, _ = run(capsys, "sweep", kie, "--policy", "confidence", "--format", "csv")
    assert [row["threshold"] for row in csv.DictReader(io.StringIO(out))][-1] == "1.0000000000000002"
    _, out, _ = run(capsys, "sweep", kie, "--policy", "confidence", "--format", "json")
    assert json.loads(out)[-1]["threshold"] == 1.0000000000000002


# --------------------------------------------------------------------------- formats


@pytest.mark.parametrize("argv", [
    ["score", "{kie}"], ["score", "{vqa}"], ["sweep", "{kie}", "--policy", "confidence"],
    ["certify", "{kie}", "--max-error", "0.5", "--delta", "0.5"], ["run", "{scenario}"],
])
def test_json_is_format_json_on_every_tabular_command(capsys, kie, vqa, scenario, argv):
    argv = [str({"{kie}": kie, "{vqa}": vqa, "{scenario}": scenario}.get(a, a)) for a in argv]
    status, by_alias, _ = run(capsys, *argv, "--json")
    assert status == 0
    status, by_format, _ = run(capsys, *argv, "--format", "json")
    assert status == 0 and by_alias == by_format and json.loads(by_format)
    status, _, err = run(capsys, *argv, "--json", "--format", "csv")
    assert status == 2 and err.startswith("rpa-sim: error: ") and err.count("\n") == 1
    assert "argument --format: not allowed with argument --json" in err


def test_csv_of_score_and_certify_is_the_json_as_one_row(capsys, kie):
    for argv in (["score", kie], ["certify", kie, "--max-error", "0.5", "--delta", "0.5"]):
        _, as_json, _ = run(capsys, *argv, "--format", "json")
        _, as_csv, _ = run(capsys, *argv, "--format", "csv")
        rows = list(csv.DictReader(io.StringIO(as_csv)))
        expected = {key: "" if value is None else str(value) for key, value in json.loads(as_json).items()}
        assert rows == [expected]


def test_csv_of_run_is_the_comparison(capsys, scenario):
    _, summary, _ = run(capsys, "run", scenario, "--json")
    _, text, _ = run(capsys, "run", scenario, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    policies = json.loads(summary)["policies"]
    assert [row["policy"] for row in rows] == ["confidence", "per-field"]
    for row, policy in zip(rows, policies):
        assert float(row["auc"]) == policy["auc"]
        assert float(row["best_cost"]) == policy["cost_optimum"]["cost"]
        point = policy["operating_points"]["0.9"]
        assert row["auto_rate_at_0.9"] == ("" if point is None else repr(point["auto_rate"]))


def test_demo_formats(capsys):
    _, as_json, _ = run(capsys, "demo", "--json")
    _, as_format, _ = run(capsys, "demo", "--format", "json")
    assert as_json == as_format and json.loads(as_json)["scenario"] == "receipts-demo"
    _, as_text, _ = run(capsys, "demo", "--text")
    _, as_table, _ = run(capsys, "demo", "--format", "table")
    assert as_text == as_table and "AUC" in as_table
    status, _, err = run(capsys, "demo", "--json", "--text")
    assert status == 2 and err == ("rpa-sim: error: demo: argument --text: not allowed with argument --json "
                                   "(see 'rpa-sim demo --help')\n")


# --------------------------------------------------------------------------- CSV quoting


def test_a_policy_name_with_quotes_and_commas_reads_back(capsys, tmp_path, kie):
    name = 'say "hi", ok'
    policy = tmp_path / "odd.yaml"
    policy.write_text(f"name: '{name}'\nreview_if: {{confidence: sweep}}\n")
    status, out, _ = run(capsys, "sweep", kie, "--policy", policy, "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert status == 0 and {len(row) for row in rows} == {9}
    assert {row[0] for row in rows[1:]} == {name}
    scenario = tmp_path / "odd-scenario.yaml"
    scenario.write_text(f"name: odd\ndata: {{file: {kie.name}}}\npolicies: [{policy.name}]\n")
    status, _, _ = run(capsys, "run", scenario, "--out-dir", tmp_path / "out")
    rows = list(csv.reader(io.StringIO((tmp_path / "out" / "curves.csv").read_text())))
    assert status == 0 and {row[0] for row in rows[1:]} == {name}


# --------------------------------------------------------------------------- --out and --out-dir


def test_out_dir_and_its_deprecated_spelling(capsys, tmp_path, scenario):
    status, out, err = run(capsys, "run", scenario, "--out-dir", tmp_path / "new")
    assert status == 0 and "AUC" in out
    assert err == f"wrote {tmp_path / 'new' / 'curves.csv'}\nwrote {tmp_path / 'new' / 'summary.json'}\n"
    status, _, err = run(capsys, "run", scenario, "--out", tmp_path / "old")
    assert status == 0 and sorted(p.name for p in (tmp_path / "old").iterdir()) == ["curves.csv", "summary.json"]
    assert err.splitlines()[-1] == ("rpa-sim: warning: --out is deprecated and will be removed in the next release; "
                                    "use --out-dir")
    status, _, err = run(capsys, "run", scenario, "--out", tmp_path / "a", "--out-dir", tmp_path / "b")
    assert status == 2 and "argument --out-dir: not allowed with argument --out" in err


def test_report_png_dir_and_its_deprecated_spelling(capsys, tmp_path, scenario):
    status, out, err = run(capsys, "report", scenario, "--out", tmp_path / "r.html", "--png", tmp_path / "png")
    assert (status, out) == (0, "")
    assert err == (f"wrote {tmp_path / 'r.html'}\n"
                   "rpa-sim: warning: --png is deprecated and will be removed in the next release; use --png-dir\n")
    names = sorted(p.name for p in (tmp_path / "png").iterdir())
    status, _, err = run(capsys, "report", scenario, "--out", tmp_path / "r2.html", "--png-dir", tmp_path / "png2")
    assert status == 0 and sorted(p.name for p in (tmp_path / "png2").iterdir()) == names == [
        "calibration.png", "cost.png", "decision.png", "tradeoff.png"]


def test_sweep_out_writes_the_file_and_prints_nothing(capsys, tmp_path, kie):
    target = tmp_path / "rows.json"
    status, out, err = run(capsys, "sweep", kie, "--policy", "confidence", "--json", "--out", target)
    assert (status, out, err) == (0, "", f"wrote {target}\n") and len(json.loads(target.read_text())) == 5


# --------------------------------------------------------------------------- help


#: Every command line with options of its own, by its words: the list a reader of docs/cli.md would write.
COMMANDS = ("demo", "run", "report", "dashboard", "evaluate", "score", "sweep", "certify", "generate",
            *(f"import {name}" for name in ("kieval-csv", "cord", "docile", "textract-expense", "dude", "azure-di",
                                            "google-docai", "mindee", "label-studio", "mapping")),
            *(f"export-policy {name}" for name in ("a2i", "rossum", "label-studio", "thresholds")),
            "staff", "replay", "estimate", "plan-audit")


def options_in_help(text: str) -> dict[str, str]:
    """The options a help text lists, each with its explanation on one line."""
    entries: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("  -"):
            spelling, _, explanation = line.strip().partition("  ")
            current = spelling.split()[0].rstrip(",")
            entries[current] = explanation.strip()
        elif current is not None and line.startswith("    ") and line.strip():
            entries[current] += " " + line.strip()
        else:
            current = None
    return entries


def test_every_option_says_its_default_or_that_it_is_required(capsys):
    vague = []
    for command in COMMANDS:
        status, out, _ = run(capsys, *command.split(), "--help")
        assert status == 0
        options = options_in_help(out)
        assert "--format" in options or command not in ("score", "sweep", "certify", "run", "staff", "estimate")
        for option, explanation in options.items():
            if option in ("-h", "--help"):
                continue
            if not ("default" in explanation or "required)" in explanation or explanation.startswith("same as --")):
                vague.append(f"{command} {option}: {explanation}")
    assert vague == []


def test_deprecated_spellings_are_hidden_from_help(capsys):
    for command, old, new in (("run", "--out ", "--out-dir"), ("report", "--png ", "--png-dir"),
                              ("dashboard", "--export-dir", "--out-dir")):
        status, out, _ = run(capsys, command, "--help")
        assert status == 0 and new in out and old not in out


def test_format_has_a_help_text(capsys):
    for command in ("score", "sweep", "certify", "run", "demo"):
        _, out, _ = run(capsys, command, "--help")
        assert "--format {table,csv,json}" in out and "how to print" in out


# --------------------------------------------------------------------------- progress


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path, kie):
    for argv in (["score", str(kie)], ["generate", "receipts", "--n", "300", "--seed", "1", "--out",
                                       str(tmp_path / "g.jsonl")]):
        completed = subprocess.run([sys.executable, "-m", "rpa_sim.cli", *argv], capture_output=True, text=True,
                                   timeout=300)
        assert completed.returncode == 0
        assert completed.stderr in ("", f"wrote 300 receipts records to {tmp_path / 'g.jsonl'}\n")


def on_a_terminal(*argv: str) -> tuple[int, bytes, bytes]:
    """Run the command with stderr on a pseudo-terminal; its status, stdout and what the terminal got."""
    main_end, terminal_end = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "rpa_sim.cli", *argv], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=terminal_end,
                               env={**os.environ, "TERM": "xterm-256color"})
    os.close(terminal_end)
    screen = b""
    while True:
        try:
            chunk = os.read(main_end, 65536)
        except OSError:  # the other end closed (Linux reports EIO)
            break
        if not chunk:
            break
        screen += chunk
    os.close(main_end)
    stdout = process.stdout.read()
    process.stdout.close()
    return process.wait(timeout=300), stdout, screen


def test_a_terminal_gets_progress_bars(tmp_path, kie):
    status, stdout, screen = on_a_terminal("score", str(kie), "--json")
    assert status == 0 and json.loads(stdout)["documents"] == 2  # stdout stays clean
    assert f"reading {kie.name}".encode() in screen and "━".encode() in screen
    out = tmp_path / "g.jsonl"
    status, _, screen = on_a_terminal("generate", "receipts", "--n", "300", "--seed", "1", "--workers", "1",
                                      "--out", str(out))
    assert status == 0 and b"generating receipts" in screen and b"/300" in screen
    assert f"wrote 300 receipts records to {out}".encode() in screen


# --------------------------------------------------------------------------- dashboard


def test_dashboard_refuses_without_a_terminal(capsys, monkeypatch):
    monkeypatch.setattr(rpa_sim.cli.scenarios, "interactive", lambda: False)
    called = []
    monkeypatch.setattr(rpa_sim.tui, "run_dashboard", lambda *a, **k: called.append((a, k)) or 0)
    status, out, err = run(capsys, "dashboard", "receipts-demo")
    assert (status, out, called) == (2, "", [])
    assert err == ("rpa-sim: error: dashboard: needs a terminal, and standard input or output is not one; "
                   "'rpa-sim run SCENARIO' prints the comparison as text\n")


def test_dashboard_in_a_terminal_runs_the_app_with_the_source_and_folder(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(rpa_sim.cli.scenarios, "interactive", lambda: True)
    called = []
    monkeypatch.setattr(rpa_sim.tui, "run_dashboard", lambda *a, **k: called.append((a, k)) or 7)
    assert run(capsys, "dashboard", "docvqa-demo", "--out-dir", tmp_path / "exports") == (7, "", "")
    status, _, err = run(capsys, "dashboard", "--export-dir", tmp_path / "old")
    assert status == 7 and err.startswith("rpa-sim: warning: --export-dir is deprecated")
    assert called == [(("docvqa-demo",), {"export_dir": tmp_path / "exports"}),
                      ((None,), {"export_dir": tmp_path / "old"})]
    (tmp_path / "file").write_text("")
    status, _, err = run(capsys, "dashboard", "--out-dir", tmp_path / "file")
    assert status == 2 and err == (f"rpa-sim: error: dashboard: argument --out-dir: '{tmp_path / 'file'}' is a file, "
                                   f"not a folder (see 'rpa-sim dashboard --help')\n")
    assert len(called) == 2


def test_the_dashboard_evaluates_with_the_workers_and_scheduler_given(capsys, monkeypatch):
    from rpa_sim.common.workers import requested_workers
    from rpa_sim.evaluate.cluster import current_scheduler

    monkeypatch.setattr(rpa_sim.cli.scenarios, "interactive", lambda: True)
    seen = []
    monkeypatch.setattr(rpa_sim.tui, "run_dashboard",
                        lambda *a, **k: seen.append((requested_workers(), current_scheduler())) or 0)
    # records (the app, replaced here, would read them): a scenario that generates its records refuses
    # --scheduler (tests/test_cli_product.py)
    assert run(capsys, "dashboard", "records.jsonl", "--workers", "3", "--scheduler", "local:2") == (0, "", "")
    assert run(capsys, "dashboard") == (0, "", "")
    assert seen == [(3, "local:2"), (None, None)]
    status, _, err = run(capsys, "dashboard", "--scheduler", "udp://x")
    assert status == 2 and err.startswith("rpa-sim: error: dashboard: argument --scheduler: ")
    assert err.endswith(" (see 'rpa-sim dashboard --help')\n") and len(seen) == 2
