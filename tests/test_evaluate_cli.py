"""``rpa-sim evaluate`` and DATA that is an outcome table (issue 10, section 1): every command prints, byte for
byte, what it prints for the records the table came from, or refuses in one line."""

from __future__ import annotations

import dataclasses
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rpa_sim.cli.entry
from rpa_sim.evaluate.tablefile import METADATA_KEY, read_info
from rpa_sim.records.readers import write_records
from rpa_sim.records.synthetic import generate_docvqa, generate_receipts
from rpa_sim.tui.loading import load_model
from tests.conftest import modules_after, write_lines
from tests.conftest import run_cli as run

KIE_COMMANDS = [
    ["score"], ["score", "--json"], ["score", "--format", "csv"], ["score", "--task", "kie"],
    ["sweep", "--policy", "confidence", "--policy", "document-escalation", "--policy", "per-field"],
    ["sweep", "--policy", "confidence", "--policy", "audited-budget", "--format", "json",
     "--miss-rate", "0.1", "--false-correction-rate", "0.02"],
    ["sweep", "--policy", "grounding-gate", "--format", "csv", "--thresholds", "linspace:0:1:11",
     "--replicates", "3", "--seed", "4", "--miss-rate", "0.2"],
    ["certify", "--max-error", "0.3", "--delta", "0.1"],
    ["certify", "--max-error", "0.3", "--delta", "0.1", "--json", "--calibration-fraction", "0.7", "--seed", "3"],
]
VQA_COMMANDS = [
    ["score"], ["score", "--json"], ["score", "--format", "csv"],
    ["sweep", "--policy", "confidence", "--policy", "grounding-gate"],
    ["sweep", "--policy", "confidence", "--format", "json", "--miss-rate", "0.1", "--false-correction-rate", "0.05",
     "--replicates", "2"],
    ["certify", "--max-error", "0.3", "--delta", "0.1", "--json"],
]
SCENARIO = """name: from-a-file
data: {{file: {data}}}
policies: [{policies}]
reviewer: {{miss_rate: 0.05, false_correction_rate: 0.01, seconds_per_item: 6, seconds_per_document: 15}}
costs: {{hourly_rate: 30, per_residual_error: 1.5}}
targets: [0.8, 0.9]
certify: {{max_error: 0.3, delta: 0.1}}
replicates: 3
seed: 2
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Records of both tasks (with OCR), and their tables as rpa-sim evaluate writes them, with settings."""
    folder = tmp_path_factory.mktemp("data")
    write_records(generate_receipts(30, seed=11), folder / "receipts.jsonl")
    write_records(generate_docvqa(50, seed=11), folder / "questions.jsonl.gz")
    made = {"kie": folder / "receipts.jsonl", "vqa": folder / "questions.jsonl.gz"}
    for name, data, options in (("kie", made["kie"], []), ("vqa", made["vqa"], []),
                                ("kie-normalized", made["kie"], ["--value-match", "normalized"]),
                                ("vqa-alpha", made["vqa"], ["--alpha", "0.6"])):
        assert rpa_sim.cli.entry.main(["evaluate", str(data), "--out", str(folder / f"{name}.parquet"), *options]) == 0
        made[f"{name}-table"] = folder / f"{name}.parquet"
    return made


def same_output(capsys, records, table, argv) -> str:
    from_records = run(capsys, argv[0], records, *argv[1:])
    from_table = run(capsys, argv[0], table, *argv[1:])
    assert from_records[0] == 0 and from_table == from_records
    return from_table[1]


# --------------------------------------------------------------------------- the same results


@pytest.mark.parametrize("argv", KIE_COMMANDS, ids=" ".join)
def test_kie_commands_print_the_same_from_the_table(capsys, files, argv):
    assert same_output(capsys, files["kie"], files["kie-table"], argv)


@pytest.mark.parametrize("argv", VQA_COMMANDS, ids=" ".join)
def test_vqa_commands_print_the_same_from_the_table(capsys, files, argv):
    assert same_output(capsys, files["vqa"], files["vqa-table"], argv)


def test_tables_evaluated_with_settings_print_the_same_with_those_settings(capsys, files):
    out = same_output(capsys, files["kie"], files["kie-normalized-table"],
                      ["score", "--json", "--value-match", "normalized"])
    assert json.loads(out)["value_match"] == "normalized"
    same_output(capsys, files["kie"], files["kie-normalized-table"],
                ["sweep", "--policy", "confidence", "--value-match", "normalized"])
    out = same_output(capsys, files["vqa"], files["vqa-alpha-table"], ["score", "--json", "--alpha", "0.6"])
    assert json.loads(out)["alpha"] == 0.6
    same_output(capsys, files["vqa"], files["vqa-alpha-table"], ["sweep", "--policy", "confidence", "--alpha", "0.6"])


def test_sweep_out_files_are_the_same(capsys, files, tmp_path):
    for source in ("kie", "kie-table"):
        status, _, err = run(capsys, "sweep", files[source], "--policy", "confidence", "--format", "csv",
                             "--out", tmp_path / f"{source}.csv")
        assert (status, err) == (0, f"wrote {tmp_path / f'{source}.csv'}\n")
    assert (tmp_path / "kie.csv").read_bytes() == (tmp_path / "kie-table.csv").read_bytes()


@pytest.mark.parametrize("task, policies", [("kie", "confidence, document-escalation, per-field, audited-budget"),
                                            ("vqa", "confidence, grounding-gate")])
def test_a_scenario_on_the_table_runs_as_on_the_records(capsys, files, tmp_path, task, policies):
    outputs = []
    for source in (task, f"{task}-table"):
        scenario = tmp_path / f"{source}.yaml"
        scenario.write_text(SCENARIO.format(data=files[source], policies=policies))
        status, out, _ = run(capsys, "run", scenario, "--format", "json", "--out-dir", tmp_path / source)
        assert status == 0
        outputs.append([out, (tmp_path / source / "curves.csv").read_bytes(),
                        (tmp_path / source / "summary.json").read_bytes()])
    assert outputs[0] == outputs[1]
    summary = json.loads(outputs[0][0])
    assert summary["costs"] is not None and summary["reviewer"]["miss_rate"] == 0.05


def test_the_dashboard_opens_a_table_as_its_records(files):
    for task in ("kie", "vqa"):
        models = [load_model(str(files[source])) for source in (task, f"{task}-table")]
        summaries = [dataclasses.replace(m.summary, scenario="") for m in models]  # named after the file opened
        assert summaries[0] == summaries[1]
        for policy in range(len(models[0].policies)):
            assert models[0].figures(policy, 0.7) == models[1].figures(policy, 0.7)
            assert models[0].field_rows(policy, 0.7) == models[1].field_rows(policy, 0.7)
        assert models[1].name == f"{task}.parquet"


def test_skipped_records_are_reported_from_the_table(capsys, files, tmp_path):
    lines = files["kie"].read_text().splitlines()
    records = tmp_path / "with-a-bad-line.jsonl"
    records.write_text("\n".join([lines[0], '{"id": "broken"', *lines[1:]]) + "\n")
    status, _, err = run(capsys, "evaluate", records, "--skip-invalid", "--out", tmp_path / "t.parquet")
    assert status == 0 and err.startswith("rpa-sim: skipped 1 record")
    assert read_info(tmp_path / "t.parquet").skipped == 1
    status, out, err = run(capsys, "score", tmp_path / "t.parquet", "--json")
    assert (status, err) == (0, "") and json.loads(out)["skipped"] == 1
    assert out == run(capsys, "score", records, "--json", "--skip-invalid")[1]


def test_a_predictions_file_is_hashed_with_the_ground_truth(capsys, files, tmp_path):
    truth, predictions = tmp_path / "truth.jsonl", tmp_path / "predictions.jsonl"
    records = [json.loads(line) for line in files["kie"].read_text().splitlines()]
    write_lines(truth, *({"id": r["id"], "ground_truth": r["ground_truth"]} for r in records))
    write_lines(predictions, *({"id": r["id"], "prediction": r["prediction"]} for r in records))
    status, _, _ = run(capsys, "evaluate", truth, "--predictions", predictions, "--out", tmp_path / "t.parquet")
    assert status == 0
    assert [s.name for s in read_info(tmp_path / "t.parquet").sources] == ["truth.jsonl", "predictions.jsonl"]
    assert run(capsys, "score", tmp_path / "t.parquet", "--json") == run(
        capsys, "score", truth, "--predictions", predictions, "--json")


# --------------------------------------------------------------------------- the file


def test_evaluate_writes_the_same_bytes_every_time(capsys, files, tmp_path):
    for name, workers in (("a", "1"), ("b", "2")):
        status, out, err = run(capsys, "evaluate", files["kie"], "--out", tmp_path / name / "t.parquet",
                               "--workers", workers)
        assert (status, out, err) == (0, "", f"wrote {tmp_path / name / 't.parquet'}\n")
    assert (tmp_path / "a" / "t.parquet").read_bytes() == (tmp_path / "b" / "t.parquet").read_bytes()
    assert (tmp_path / "a" / "t.parquet").read_bytes() == files["kie-table"].read_bytes()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["t.parquet"]


def test_evaluate_checks_its_output_before_reading_the_records(capsys, tmp_path):
    bad = write_lines(tmp_path / "bad.jsonl", "not json")
    status, _, err = run(capsys, "evaluate", bad, "--out", tmp_path)
    assert (status, err) == (2, f"rpa-sim: error: evaluate: argument --out: '{tmp_path}' is a folder, not a file (a "
                                f"folder of tables is named with a trailing /) (see 'rpa-sim evaluate --help')\n")


@pytest.mark.parametrize("command", ["evaluate", "score", "sweep", "certify", "replay", "plan-audit",
                                     "export-policy label-studio", "run", "report", "dashboard", "staff"])
def test_every_command_that_evaluates_records_takes_workers_and_a_scheduler(capsys, command):
    status, out, _ = run(capsys, *command.split(), "--help")
    help_text = " ".join(out.split())
    assert status == 0 and "--workers N" in help_text and "--scheduler ADDRESS" in help_text
    assert "results are identical for any N (default: every core this process may use)" in help_text
    status, _, err = run(capsys, *command.split(), "--workers", "0")
    assert status == 2
    assert err == (f"rpa-sim: error: {command}: argument --workers: expected an integer >= 1, got '0' "
                   f"(see 'rpa-sim {command} --help')\n")


def test_the_workers_give_the_same_results(capsys, files, tmp_path):
    for argv in (["score", files["kie"], "--json"], ["sweep", files["vqa"], "--policy", "confidence", "--json"],
                 ["certify", files["kie"], "--max-error", "0.3", "--delta", "0.2", "--json"]):
        outputs = {run(capsys, *argv, "--workers", workers)[1] for workers in ("1", "3")}
        assert len(outputs) == 1 and outputs != {""}


def test_reading_records_and_the_help_never_import_pyarrow(files):
    loaded = modules_after(f"rpa_sim.cli.entry.main(['score', {str(files['kie'])!r}])\n"
                           f"rpa_sim.cli.entry.main(['evaluate', '--help'])")
    assert "rpa_sim.evaluate.outcomes" in loaded and not [name for name in loaded if name.split(".")[0] == "pyarrow"]


def test_writing_and_reading_tables_never_import_pandas(files, tmp_path):
    # pandas, when installed, is what pyarrow's conversion of numpy arrays imports: a fifth of a second per process
    loaded = modules_after(f"for data in ({str(files['kie'])!r}, {str(files['vqa'])!r}):\n"
                           f"    out = {str(tmp_path)!r} + '/' + data.rsplit('/', 1)[-1] + '.parquet'\n"
                           f"    assert rpa_sim.cli.entry.main(['evaluate', data, '--out', out]) == 0\n"
                           f"    assert rpa_sim.cli.entry.main(['score', out]) == 0")
    assert "pyarrow.parquet" in loaded and not [name for name in loaded if name.split(".")[0] == "pandas"]


# --------------------------------------------------------------------------- what is refused


def refused(capsys, *argv) -> tuple[int, str]:
    status, out, err = run(capsys, *argv)
    assert out == "" and err.count("\n") == 1 and err.startswith("rpa-sim: error: ")
    return status, err.removeprefix("rpa-sim: error: ").rstrip("\n")


def test_options_for_records_are_usage_errors_with_a_table(capsys, files):
    table = files["kie-table"]
    assert refused(capsys, "score", table, "--predictions", files["kie"]) == (
        2, f"--predictions applies to records, and {table} is an outcome table, which holds its predictions already")
    assert refused(capsys, "sweep", table, "--policy", "confidence", "--skip-invalid") == (
        2, f"--skip-invalid applies to records, and {table} is an outcome table (rpa-sim evaluate --skip-invalid "
           f"skips them when it makes the table)")
    assert refused(capsys, "score", files["vqa-table"], "--value-match", "exact") == (
        2, f"--value-match applies to KIE data only, and the task is VQA (read from {files['vqa-table']})")
    assert refused(capsys, "evaluate", table, "--out", table.with_name("again.parquet")) == (
        2, f"evaluate: {table} is an outcome table already; evaluate reads records")


def test_another_task_or_other_settings_are_refused_with_how_to_get_them(capsys, files):
    table, questions = files["kie-table"], files["vqa-table"]
    assert refused(capsys, "score", table, "--task", "vqa") == (1, f"{table}: is an outcome table of KIE data, not VQA")
    assert refused(capsys, "score", table, "--value-match", "normalized") == (
        1, f"{table}: evaluated with value_match exact; re-run rpa-sim evaluate with --value-match normalized")
    # an option left out means its default, as with records: never the table's setting silently
    assert refused(capsys, "certify", files["kie-normalized-table"], "--max-error", "0.1", "--delta", "0.1") == (
        1, f"{files['kie-normalized-table']}: evaluated with value_match normalized; re-run rpa-sim evaluate with "
           f"--value-match exact")
    assert refused(capsys, "sweep", questions, "--policy", "confidence", "--alpha", "0.5") == (
        1, f"{questions}: evaluated with alpha 0.25; re-run rpa-sim evaluate with --alpha 0.5")
    assert refused(capsys, "score", files["vqa-alpha-table"]) == (
        1, f"{files['vqa-alpha-table']}: evaluated with alpha 0.6; re-run rpa-sim evaluate with --alpha 0.25")


def test_scenarios_refuse_a_predictions_file_and_other_settings_with_a_table(capsys, files, tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"name: s\ndata: {{file: {files['kie-table']}, predictions: {files['kie']}}}\n"
                        "policies: [confidence]\n")
    assert refused(capsys, "run", scenario) == (
        1, f"{files['kie-table']}: is an outcome table, which holds its predictions; a predictions file goes with "
           f"records only, got {str(files['kie'])!r}")
    scenario.write_text(f"name: s\ndata: {{file: {files['vqa-table']}}}\npolicies: [confidence]\nalpha: 0.5\n")
    assert refused(capsys, "run", scenario) == (
        1, f"{files['vqa-table']}: evaluated with alpha 0.25; re-run rpa-sim evaluate with --alpha 0.5")
    scenario.write_text(f"name: s\ndata: {{file: {files['vqa-table']}}}\ntask: kie\npolicies: [confidence]\n")
    assert refused(capsys, "run", scenario) == (1, f"{files['vqa-table']}: is an outcome table of VQA data, not KIE")


def test_files_that_are_not_tables_of_this_rpa_sim_are_one_line_errors(capsys, files, tmp_path):
    text = tmp_path / "notes.parquet"
    text.write_text("id,value\n")
    status, message = refused(capsys, "score", text)
    assert status == 1 and message.startswith(f"{text}: not a Parquet file, or a truncated one (")
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(files["kie-table"].read_bytes()[:-100])
    status, message = refused(capsys, "sweep", cut, "--policy", "confidence")
    assert status == 1 and message.startswith(f"{cut}: not a Parquet file, or a truncated one (")
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"confidence": [0.5]}), plain)
    assert refused(capsys, "certify", plain, "--max-error", "0.1", "--delta", "0.1") == (
        1, f"{plain}: a Parquet file, but not an rpa-sim outcome table (no rpa_sim metadata); make one with "
           f"rpa-sim evaluate")
    data = pq.read_table(files["kie-table"])
    stored = json.loads(data.schema.metadata[METADATA_KEY])
    old = tmp_path / "old.parquet"
    pq.write_table(data.replace_schema_metadata({METADATA_KEY: json.dumps({**stored, "rpa_sim_version": "0.0.9"})}),
                   old)
    assert refused(capsys, "score", old) == (
        1, f"{old}: written by rpa-sim '0.0.9', and this is rpa-sim {rpa_sim.__version__}; re-run rpa-sim evaluate "
           f"on its records")
    missing = tmp_path / "missing.parquet"
    pq.write_table(data.drop_columns(["outcome"]), missing)
    assert refused(capsys, "score", missing) == (1, f"{missing}: not an rpa-sim outcome table: no column 'outcome'")
    nowhere = tmp_path / "nowhere.parquet"
    assert refused(capsys, "score", nowhere) == (1, f"{nowhere}: no such file")
