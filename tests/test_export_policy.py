"""rpa-sim export-policy: exact outputs of bundled policies, A2I's published schema, the Label Studio round
trip against the sweep, and every mistake in one line (docs/export.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from rpa_sim.bundled import bundled_names
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.readers import read_records, write_records
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.export.a2i import percent
from rpa_sim.route.export.label_studio import review_order
from rpa_sim.route.export.rules import Thresholds, TypeThresholds, policy_at
from rpa_sim.route.policies import Policy, load_policy
from rpa_sim.route.sweep import Sweeper
from rpa_sim.study.run import run_scenario, write_outputs
from rpa_sim.study.scenario import load_scenario
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data"
SCHEMA = DATA / "a2i" / "human-loop-activation-conditions.schema.json"
#: The parameters Textract AnalyzeDocument takes, per condition type (AWS's Textract page; tests/data/a2i/README.md).
_BLOCKS = [f"{block}Confidence{test}" for block in ("KeyValueBlock", "WordBlock")
           for test in ("Equals", "LessThan", "LessThanEquals", "GreaterThan", "GreaterThanEquals")]
TEXTRACT_PARAMETERS = {
    "ImportantFormKeyConfidenceCheck": {"ImportantFormKey", "ImportantFormKeyAliases", *_BLOCKS},
    "MissingImportantFormKey": {"ImportantFormKey", "ImportantFormKeyAliases"},
    "Sampling": {"RandomSamplingPercentage"},
}
FIELD_MAP = "Total: total.total_price\nAmount due: total.total_price\nSubtotal: sub_total.subtotal_price\n" \
            "Store: store.name\nTip: null\n"


def _export(capsys, tmp_path, *argv, out="out.json"):
    """Run export-policy; the status, the file written (parsed) and standard error."""
    target = tmp_path / out
    status, stdout, err = run_cli(capsys, "export-policy", *argv, "--out", target)
    assert stdout == ""
    if status != 0:
        return status, None, err
    text = target.read_text(encoding="utf-8")
    return status, (json.loads(text) if target.suffix == ".json" else yaml.safe_load(text)), err


def _check(key, threshold, aliases=(), *, block="KeyValueBlockConfidenceLessThan"):
    parameters = {"ImportantFormKey": key, **({"ImportantFormKeyAliases": list(aliases)} if aliases else {}),
                  block: threshold}
    return {"ConditionType": "ImportantFormKeyConfidenceCheck", "ConditionParameters": parameters}


# -- exact outputs ---------------------------------------------------------------------------------


def test_a2i_per_field_with_a_field_map(capsys, tmp_path):
    (tmp_path / "map.yaml").write_text(FIELD_MAP)
    status, conditions, err = _export(capsys, tmp_path, "a2i", "--policy", "per-field", "--threshold", "0.57",
                                      "--fields", tmp_path / "map.yaml")
    # the map names every field: each has its check; "Amount due" is another name of the total, Tip is dropped
    assert conditions == {"Conditions": [{"Or": [_check("Total", 97, ["Amount due"]), _check("Subtotal", 95),
                                                 _check("Store", 57)]}]}
    assert (status, err) == (0, f"wrote {tmp_path / 'out.json'}: 3 conditions: 3 confidence checks\n")


def test_a2i_without_named_fields_uses_the_catch_all_key(capsys, tmp_path):
    status, conditions, _ = _export(capsys, tmp_path, "a2i", "--policy", "per-field", "--threshold", "0.8")
    assert status == 0 and conditions == {"Conditions": [{"Or": [
        _check("*", 80), _check("total.total_price", 97), _check("sub_total.subtotal_price", 95)]}]}
    # one condition stands alone: Or takes two or more
    _, alone, _ = _export(capsys, tmp_path, "a2i", "--policy", "confidence", "--threshold", "0.8")
    assert alone == {"Conditions": [_check("*", 80)]}


def test_a2i_audit_is_sampling_and_the_budget_a_note(capsys, tmp_path):
    status, conditions, err = _export(capsys, tmp_path, "a2i", "--policy", "audited-budget", "--threshold",
                                      "0.8723449230194092", "--field", "total", "--textract-confidence", "word")
    assert status == 0 and conditions == {"Conditions": [{"Or": [
        _check("total", 87.23449230194092, block="WordBlockConfidenceLessThan"),
        {"ConditionType": "Sampling", "ConditionParameters": {"RandomSamplingPercentage": 2}}]}]}
    assert err.splitlines()[:2] == [
        "note: a2i cannot state budget: at most 0.25 of the values are reviewed, the least confident first",
        "note: a2i samples documents, not values: Sampling sends 2% of all documents (every key-value pair of each) "
        "to review, where the policy audits 0.02 of the auto-accepted values"]


def test_a2i_missing_confidence_review_is_a_missing_key_check(capsys, tmp_path):
    status, conditions, _ = _export(capsys, tmp_path, "a2i", "--policy", "missing-confidence-review",
                                    "--threshold", "0.5", "--field", "total", "--field", "date")
    missing = [{"ConditionType": "MissingImportantFormKey", "ConditionParameters": {"ImportantFormKey": key}}
               for key in ("total", "date")]
    assert status == 0 and conditions == {"Conditions": [{"Or": [_check("total", 50), _check("date", 50), *missing]}]}


def test_a2i_grounding_gate_says_what_it_leaves_out(capsys, tmp_path):
    status, conditions, err = _export(capsys, tmp_path, "a2i", "--policy", "grounding-gate", "--threshold", "0.8")
    assert status == 0 and conditions == {"Conditions": [_check("*", 80)]}
    assert err.splitlines()[0] == ("note: a2i cannot state review_if: grounding below 0.6 (a value without one is "
                                   "reviewed); left out of any_of, so fewer values are reviewed than the policy "
                                   "reviews")


def test_rossum_per_field_and_per_document_type(capsys, tmp_path):
    status, patch, err = _export(capsys, tmp_path, "rossum", "--policy", "per-field", "--threshold", "0.8")
    whole_documents = ("rossum validates whole documents: a document with one value below its threshold stops for a "
                       "person, who confirms all of it, where the policy reviews that value alone (a study of the "
                       "same thresholds with escalate: document prices whole documents)")
    assert status == 0 and patch == {
        "queue": {"default_score_threshold": 0.8},
        "schema_datapoints": [{"id": "total.total_price", "score_threshold": 0.97},
                              {"id": "sub_total.subtotal_price", "score_threshold": 0.95}],
        "rpa_sim": {"policy": "per-field", "threshold": 0.8, "threshold_from": "--threshold", "knob": "confidence",
                    "notes": [whole_documents]}}
    assert err == f"note: {whole_documents}\nwrote {tmp_path / 'out.json'}: default_score_threshold 0.8, 2 datapoints\n"
    (tmp_path / "map.yaml").write_text(FIELD_MAP)
    _, photo, _ = _export(capsys, tmp_path, "rossum", "--policy", "per-document-type", "--threshold", "0.57",
                          "--document-type", "phone-photo", "--fields", tmp_path / "map.yaml")
    # the phone photos' own 0.95, and 0.99 for their totals under both names of the total
    assert photo["queue"] == {"default_score_threshold": 0.95}
    assert photo["schema_datapoints"] == [{"id": "Total", "score_threshold": 0.99},
                                          {"id": "Amount due", "score_threshold": 0.99},
                                          {"id": "Subtotal", "score_threshold": 0.95},
                                          {"id": "Store", "score_threshold": 0.95}]
    assert photo["rpa_sim"]["document_type"] == "phone-photo"


def test_rossum_cannot_state_a_reject_band(capsys, tmp_path):
    status, patch, err = _export(capsys, tmp_path, "rossum", "--policy", "reject-band", "--threshold", "0.6")
    note = ("rossum cannot state reject_if: confidence below 0.2 (such a value leaves the automated flow: neither "
            "reviewed nor accepted)")
    assert status == 0 and patch["queue"] == {"default_score_threshold": 0.6} and patch["schema_datapoints"] == []
    assert patch["rpa_sim"]["notes"][0] == note and err.startswith(f"note: {note}\n")


def test_thresholds_yaml_of_a_reject_band(capsys, tmp_path):
    status, document, err = _export(capsys, tmp_path, "thresholds", "--policy", "reject-band", "--threshold", "0.57",
                                    "--field", "total", out="t.yaml")
    assert status == 0 and document == {
        "policy": "reject-band", "threshold": 0.57, "threshold_from": "--threshold", "knob": "confidence",
        "review_below": {"default": 0.57, "fields": {"total": 0.57}},
        "reject_below": {"default": 0.2, "fields": {"total": 0.2}}, "notes": []}
    assert err == f"wrote {tmp_path / 't.yaml'}: YAML, thresholds of 1 field and the default\n"


def test_thresholds_json_per_document_type_spells_out_every_cell(capsys, tmp_path):
    status, document, _ = _export(capsys, tmp_path, "thresholds", "--policy", "per-document-type", "--threshold",
                                  "0.7", "--field", "total.total_price", "--field", "store.name")
    assert status == 0 and document["review_below"] == {
        "default": 0.7, "fields": {"total.total_price": 0.7, "store.name": 0.7},
        "document_types": {"invoice": {"default": 0.9, "fields": {"total.total_price": 0.9, "store.name": 0.9}},
                           "phone-photo": {"default": 0.95,
                                           "fields": {"total.total_price": 0.99, "store.name": 0.95}}}}


def test_thresholds_of_the_other_settings(capsys, tmp_path):
    _, budget, _ = _export(capsys, tmp_path, "thresholds", "--policy", "audited-budget", "--threshold", "0.8")
    assert (budget["audit"], budget["budget"]) == (0.02, {"share": 0.25})
    _, escalation, _ = _export(capsys, tmp_path, "thresholds", "--policy", "document-escalation", "--threshold", "1")
    assert (escalation["escalate"], escalation["fix_additions"], escalation["notes"]) == ("document", True, [])
    _, grounded, _ = _export(capsys, tmp_path, "thresholds", "--policy", "grounding-sweep", "--threshold", "0.5")
    # the swept grounding gate is no confidence threshold: the fixed confidence test is what is left
    assert grounded["review_below"] == {"default": 0.3, "fields": {}} and grounded["knob"] == "grounding"
    assert grounded["notes"] == ["thresholds cannot state review_if: grounding below τ = 0.5 (a value without one is "
                                 "reviewed); left out of any_of, so fewer values are reviewed than the policy reviews"]


def test_a_threshold_above_one_reviews_every_value(capsys, tmp_path):
    # a fixed threshold above 1 (.inf in YAML) reviews every value it covers: each format says so its own way
    (tmp_path / "p.yaml").write_text("name: all-totals\nreview_if:\n  confidence:\n    below: sweep\n"
                                     "    fields: {total: .inf}\n")
    _, conditions, _ = _export(capsys, tmp_path, "a2i", "--policy", tmp_path / "p.yaml", "--threshold", "0.5",
                               "--field", "total", "--field", "date")
    assert conditions == {"Conditions": [{"Or": [_check("total", 100, block="KeyValueBlockConfidenceLessThanEquals"),
                                                 _check("date", 50)]}]}
    _, patch, _ = _export(capsys, tmp_path, "rossum", "--policy", tmp_path / "p.yaml", "--threshold", "0.5")
    assert patch["schema_datapoints"] == [{"id": "total", "score_threshold": 1.0}]
    _, rules, _ = _export(capsys, tmp_path, "thresholds", "--policy", tmp_path / "p.yaml", "--threshold", "0.5",
                          out="t.yaml")
    assert rules["review_below"] == {"default": 0.5, "fields": {"total": "all"}}


def test_percent_is_the_decimal_number_times_100():
    assert [percent(share) for share in (0.57, 0.02, 0.001, 0.29, 1.0)] == [57, 2, 0.1, 29, 100]
    assert 0.57 * 100 != 57 and 0.29 * 100 != 29  # what multiplying the floats would have written


def test_any_of_takes_the_larger_threshold_and_all_of_the_smaller():
    base = {"name": "p", "review_if": {"any_of": [
        {"confidence": {"below": "sweep", "fields": {"a": 0.9}}},
        {"confidence": {"below": 0.6, "document_types": {"t": {"below": 0.95, "fields": {"b": 0.2}}}}}]}}
    either = policy_at(Policy.model_validate(base), 0.7, source="x").review
    assert either == Thresholds(0.7, {"a": 0.9, "b": 0.7}, {"t": TypeThresholds(0.95, {"b": 0.7})})
    both = policy_at(Policy.model_validate({**base, "review_if": {"all_of": base["review_if"]["any_of"]}}), 0.7,
                     source="x").review
    assert both == Thresholds(0.6, {"a": 0.6, "b": 0.6}, {"t": TypeThresholds(0.7, {"a": 0.9, "b": 0.2})})
    # exact: a value is reviewed under the thresholds iff one (any_of) or each (all_of) of the two tests holds
    for key in ("a", "b", "c"):
        for kind in (None, "t", "u"):
            first = 0.9 if key == "a" else 0.7
            second = (0.2 if key == "b" else 0.95) if kind == "t" else 0.6
            assert (either.of(key, kind), both.of(key, kind)) == (max(first, second), min(first, second))


# -- A2I's published schema ----------------------------------------------------------------------------


def test_every_a2i_export_fits_the_published_schema(capsys, tmp_path):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (the test extra) validates the A2I output")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    (tmp_path / "map.yaml").write_text(FIELD_MAP)
    exported = 0
    for name in bundled_names("policy"):
        for extra in ([], ["--fields", tmp_path / "map.yaml"], ["--textract-confidence", "word"]):
            status, conditions, err = _export(capsys, tmp_path, "a2i", "--policy", name, "--threshold", "0.9", *extra)
            if name == "document-confidence-mean":  # its only review rule is a document's mean: nothing to test
                assert status == 1 and err.startswith("rpa-sim: error: policy 'document-confidence-mean' states "
                                                      "nothing a2i can test: ")
                continue
            assert status == 0, err
            jsonschema.validate(conditions, schema)
            _check_textract_parameters(conditions["Conditions"])
            exported += 1
    assert exported == 3 * (len(bundled_names("policy")) - 1)


def _check_textract_parameters(conditions):
    for condition in conditions:
        if "Or" in condition:
            assert len(condition) == 1 and len(condition["Or"]) >= 2
            _check_textract_parameters(condition["Or"])
            continue
        parameters = condition["ConditionParameters"]
        assert set(parameters) <= TEXTRACT_PARAMETERS[condition["ConditionType"]]
        if condition["ConditionType"] == "Sampling":
            assert 0.01 <= parameters["RandomSamplingPercentage"] <= 100
        else:
            assert isinstance(parameters["ImportantFormKey"], str)
            assert all(0 <= value <= 100 for key, value in parameters.items() if key in _BLOCKS)


# -- Label Studio: the routed values, exactly --------------------------------------------------------------


def _routed(table, policy, threshold):
    """(record id, key, value, confidence) of each value the sweep routes at τ, and the sweep's reviewed count."""
    sweeper = Sweeper(table, policy)
    rows = np.flatnonzero(sweeper.reviewed_at(threshold))
    values = sorted((str(table.document_ids[table.document[row]]), table.keys[table.key[row]], str(table.value[row]),
                     float(table.confidence[row])) for row in rows)
    return values, sweeper.at(threshold)["reviewed"]


def _task_values(tasks):
    return sorted((task["meta"]["rpa_sim"]["id"], result["from_name"], result["value"]["text"][0], result["score"])
                  for task in tasks for result in task["predictions"][0]["result"])


def test_label_studio_round_trip_through_a_study(capsys, tmp_path):
    # import a Label Studio export, keep the tasks with both sides, study them, export the decision back as tasks
    status, _, _ = run_cli(capsys, "import", "label-studio", DATA / "label_studio" / "receipts_ocr.json", "--out",
                           tmp_path / "all.jsonl")
    assert status == 0
    both = [record for record in read_records(tmp_path / "all.jsonl", skip_invalid=True)]
    assert [record.id for record in both] == ["101", "102"]
    write_records(iter(both), tmp_path / "both.jsonl")
    (tmp_path / "study.yaml").write_text("name: round-trip\ndata: {file: both.jsonl}\n"
                                         "policies: [confidence, document-escalation]\ntargets: [0.7]\n")
    status, _, _ = run_cli(capsys, "run", tmp_path / "study.yaml", "--out-dir", tmp_path / "study")
    assert status == 0
    decision = json.loads((tmp_path / "study" / "summary.json").read_text())["decision"]
    assert (decision["policy"], decision["threshold"]) == ("confidence", 0.87)
    status, tasks, err = _export(capsys, tmp_path, "label-studio", "--from", tmp_path / "study" / "summary.json",
                                 "--scenario", tmp_path / "study.yaml", tmp_path / "both.jsonl")
    assert status == 0, err
    table = evaluate_kie(read_records(tmp_path / "both.jsonl"))
    routed, reviewed = _routed(table, load_policy("confidence"), 0.87)
    assert _task_values(tasks) == routed and len(routed) == reviewed == 2
    # the least confident first: task 102's total (0.55) before 101's (0.62); 101's address at 0.87 is not below τ
    assert [(task["meta"]["rpa_sim"]["id"], task["meta"]["rpa_sim"]["review_order"]) for task in tasks] == \
        [("102", 1), ("101", 2)]
    assert tasks[0] == {
        "data": {"image": "102"},
        "predictions": [{"model_version": "both", "score": 0.55, "result": [
            {"id": "r1", "from_name": "total", "to_name": "image", "type": "textarea", "value": {"text": ["7.20"]},
             "score": 0.55}]}],
        "meta": {"rpa_sim": {"id": "102", "review_order": 1, "values": 1, "policy": "confidence", "threshold": 0.87,
                             "threshold_from": f"the decision of {tmp_path / 'study' / 'summary.json'}",
                             "knob": "confidence", "notes": []}}}
    assert err == f"wrote {tmp_path / 'out.json'}: 2 tasks, 2 of 7 values; the sweep counts 2 reviewed at τ 0.87\n"
    # the same tasks from the policy and threshold given by hand; imported back, the routed values as predictions
    _, again, _ = _export(capsys, tmp_path, "label-studio", tmp_path / "both.jsonl", "--policy", "confidence",
                          "--threshold", "0.87")
    assert [task["predictions"] for task in again] == [task["predictions"] for task in tasks]
    status, _, _ = run_cli(capsys, "import", "label-studio", tmp_path / "out.json", "--id-from", "data.image",
                           "--out", tmp_path / "back.jsonl")
    # prediction-only records (no annotation yet): read as JSON, since scoring needs both sides
    back = sorted((record["id"], entity["key"], entity["value"], entity["confidence"])
                  for record in map(json.loads, (tmp_path / "back.jsonl").read_text().splitlines())
                  for entity in record["prediction"]["entities"])
    assert status == 0 and back == routed


@pytest.mark.parametrize("name", [name for name in bundled_names("policy") if name != "per-document-type"])
def test_label_studio_tasks_are_the_values_the_sweep_reviews(capsys, tmp_path, name):
    write_records(generate_receipts(30, seed=4), tmp_path / "receipts.jsonl")
    table = evaluate_kie(read_records(tmp_path / "receipts.jsonl"))
    policy = load_policy(name)
    # a threshold that routes some of the values and not all: whole documents go at a lower one
    threshold = 0.5 if policy.knob == "grounding" else 0.2 if policy.escalate == "document" else 0.8
    status, tasks, err = _export(capsys, tmp_path, "label-studio", tmp_path / "receipts.jsonl", "--policy", name,
                                 "--threshold", str(threshold), "--document-url", "s3://docs/{id}.png",
                                 "--model-version", "donut-v2")
    assert status == 0, err
    routed, reviewed = _routed(table, policy, threshold)
    assert _task_values(tasks) == routed and 0 < len(routed) < len(table)
    # audits are drawn in production: in expectation they add audit x (values not routed) to the sweep's count
    assert reviewed == pytest.approx(len(routed) + policy.audit * (len(table) - len(routed)))
    assert all(task["data"]["image"] == f"s3://docs/{task['meta']['rpa_sim']['id']}.png" for task in tasks)
    assert {task["predictions"][0]["model_version"] for task in tasks} == {"donut-v2"}
    lowest = [min(result["score"] for result in task["predictions"][0]["result"]) for task in tasks]
    assert lowest == sorted(lowest) and [task["predictions"][0]["score"] for task in tasks] == lowest
    if policy.reviews_documents:  # whole documents: every value of a routed document
        documents = {task["meta"]["rpa_sim"]["id"] for task in tasks}
        assert len(routed) == sum(str(table.document_ids[d]) in documents for d in table.document)


def test_review_order_puts_unknown_confidences_first_and_keeps_ties_in_data_order():
    values, documents = review_order(np.array([0.4, np.nan, 0.4, 0.1, np.nan]), np.array([3, 5, 1, 5, 0]))
    assert values.tolist() == [1, 4, 3, 0, 2] and documents.tolist() == [5, 0, 3, 1]


def test_label_studio_leaves_out_the_score_of_a_value_without_confidence(capsys, tmp_path):
    status, _, _ = run_cli(capsys, "import", "label-studio", DATA / "label_studio" / "invoice_fields.json",
                           "--out", tmp_path / "fields.jsonl")
    records = [record for record in read_records(tmp_path / "fields.jsonl", skip_invalid=True,
                                                 missing_confidence=True)]
    write_records(iter(records), tmp_path / "both.jsonl")
    status, tasks, err = _export(capsys, tmp_path, "label-studio", tmp_path / "both.jsonl", "--policy",
                                 "missing-confidence-review", "--threshold", "0.5")
    assert status == 0, err
    results = [result for task in tasks for result in task["predictions"][0]["result"]]
    assert results and all("score" not in result for result in results)
    assert all("score" not in task["predictions"][0] for task in tasks)


# -- mistakes: one line each -------------------------------------------------------------------------------


def test_mistakes_are_one_line(capsys, tmp_path):
    write_records(generate_receipts(5, seed=1), tmp_path / "r.jsonl")
    summary = {"scenario": "x"}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    cases = [
        (["a2i", "--data", tmp_path / "r.jsonl", "--policy", "confidence", "--threshold", "0.5", "--field",
          "totl"], 1,
         "rpa-sim: error: --field names the field 'totl', which the data does not have (fields: "),
        (["a2i", "--policy", "per-field", "--threshold", "0.5", "--field", "total"], 1,
         "rpa-sim: error: policy 'per-field' sets a threshold for 'total.total_price', which --field and --fields do "
         "not name (fields: total)"),
        (["rossum", "--policy", "confidence", "--threshold", "-0.1"], 2,
         "rpa-sim: error: export-policy rossum: argument --threshold: expected a number >= 0 (scores are in [0, 1]; "
         "above 1 reviews everything), got '-0.1'"),
        (["rossum", "--policy", "confidence"], 2, "rpa-sim: error: export-policy rossum: --policy needs --threshold T"),
        (["rossum", "--from", tmp_path / "summary.json"], 1,
         f"rpa-sim: error: {tmp_path / 'summary.json'}: "),
        (["rossum", "--from", tmp_path / "summary.json", "--scenario", "receipts-demo", "--threshold", "0.5"], 2,
         "rpa-sim: error: export-policy rossum: --threshold goes with --policy"),
        (["label-studio", "--policy", "confidence", "--threshold", "0.5"], 2,
         "rpa-sim: error: export-policy label-studio: the following arguments are required: DATA"),
        (["a2i", "--policy", "confidence", "--threshold", "0.5", "--model-version", "x"], 2,
         "rpa-sim: error: export-policy a2i: unrecognized arguments: --model-version x "
         "(see 'rpa-sim export-policy a2i --help')"),
        (["rossum", "--policy", "confidence", "--threshold", "0.5", "--predictions", tmp_path / "r.jsonl"], 2,
         "rpa-sim: error: export-policy rossum: --predictions, --task and --skip-invalid go with --data"),
        (["thresholds", "--policy", "confidence", "--threshold", "0.5"], 2,
         "rpa-sim: error: export-policy thresholds: --out"),
        (["a2i", "--policy", "confidance", "--threshold", "0.5"], 1,
         "rpa-sim: error: no bundled policy named 'confidance'; did you mean 'confidence'?"),
    ]
    for argv, expected_status, start in cases:
        status, _, err = _export(capsys, tmp_path, *argv, out="out.txt" if argv[0] == "thresholds" else "out.json")
        assert (status, err.count("\n"), err[:len(start)]) == (expected_status, 1, start), argv


def test_a_summary_without_a_decision_or_of_another_scenario(capsys, tmp_path):
    status, _, _ = run_cli(capsys, "run", "receipts-demo", "--out-dir", tmp_path / "demo")
    assert status == 0
    summary = json.loads((tmp_path / "demo" / "summary.json").read_text())
    old = {key: value for key, value in summary.items() if key != "decision"}
    (tmp_path / "old.json").write_text(json.dumps(old))
    status, _, err = _export(capsys, tmp_path, "a2i", "--from", tmp_path / "old.json", "--scenario", "receipts-demo")
    assert (status, err) == (1, f"rpa-sim: error: {tmp_path / 'old.json'}: holds no decision (it was written before "
                                f"rpa-sim decided): give --policy and --threshold\n")
    status, _, err = _export(capsys, tmp_path, "a2i", "--from", tmp_path / "demo" / "summary.json",
                             "--scenario", "docvqa-demo")
    assert (status, err) == (1, f"rpa-sim: error: {tmp_path / 'demo' / 'summary.json'}: is the result of scenario "
                                f"'receipts-demo', and --scenario docvqa-demo is scenario 'docvqa-demo'\n")
    (tmp_path / "bad.json").write_text('{"scenario": 3}')
    status, _, err = _export(capsys, tmp_path, "a2i", "--from", tmp_path / "bad.json", "--scenario", "receipts-demo")
    assert status == 1 and err.startswith(f"rpa-sim: error: {tmp_path / 'bad.json'}: ") and err.count("\n") == 1
    # the decision of the demo, stated as rules: its policy and threshold, and where they come from
    status, rules, err = _export(capsys, tmp_path, "thresholds", "--from", tmp_path / "demo" / "summary.json",
                                 "--scenario", "receipts-demo", out="t.json")
    decision = summary["decision"]
    assert status == 0 and (rules["policy"], rules["threshold"]) == (decision["policy"], decision["threshold"])
    assert rules["threshold_from"].startswith(f"the decision of {tmp_path / 'demo' / 'summary.json'}")


#: A study of an inline policy with per-field thresholds and the scenario's rejected_quality: rules that are in no
#: bundled file, which summary.json (schema version 3) carries for export-policy --from.
INLINE_STUDY = """name: inline-rules
data: {generate: receipts, n: 60, seed: 4}
rejected_quality: as_predicted
policies:
  - name: strict-totals
    review_if:
      confidence: {below: sweep, fields: {total.total_price: 0.97}}
    reject_if:
      confidence: {below: 0.05}
costs: {hourly_rate: 30, per_residual_error: 2}
reviewer: {seconds_per_item: 6}
targets: [0.9]
"""


@pytest.fixture(scope="module")
def inline_study(tmp_path_factory):
    """The study's summary.json (written as ``run --out-dir`` writes it) beside its scenario file, and DATA for
    label-studio."""
    folder = tmp_path_factory.mktemp("inline")
    (folder / "study.yaml").write_text(INLINE_STUDY)
    write_records(generate_receipts(60, seed=4), folder / "data.jsonl")
    write_outputs(run_scenario(*load_scenario(folder / "study.yaml")), folder / "out")
    return folder


@pytest.mark.parametrize("format_name", ["a2i", "rossum", "label-studio", "thresholds"])
def test_from_a_summary_the_rules_it_holds_need_no_scenario(capsys, tmp_path, inline_study, format_name):
    """Every platform: --from a version-3 summary alone writes the same file as with --scenario, and as a
    version-2 summary (without the rules) with --scenario writes it."""
    summary = inline_study / "out" / "summary.json"
    text = summary.read_text(encoding="utf-8")
    decided = json.loads(text)["decision"]
    assert decided["rules"]["name"] == decided["policy"] == "strict-totals"
    assert decided["rules"]["rejected_quality"] == "as_predicted"  # the scenario's, which the policy does not set
    data = [inline_study / "data.jsonl"] if format_name == "label-studio" else []
    out = "out.yaml" if format_name == "thresholds" else "out.json"
    scenario = ["--scenario", inline_study / "study.yaml"]
    written = []
    for version, extra in ((3, []), (3, scenario), (2, scenario)):
        copy = tmp_path / "summary.json"  # one path: the files name it in threshold_from
        if version == 2:
            old = json.loads(text)
            old["schema_version"] = 2
            del old["decision"]["rules"]
            copy.write_text(json.dumps(old, indent=2) + "\n", encoding="utf-8")
        else:
            copy.write_text(text, encoding="utf-8")
        # the study's decision misses its quality target: exported knowingly
        status, _, err = _export(capsys, tmp_path, format_name, *data, "--from", copy, *extra, "--allow-infeasible",
                                 out=out)
        assert status == 0, err
        written.append((tmp_path / out).read_bytes())
    assert written[0] == written[1] == written[2]


def test_a_summary_without_rules_needs_its_scenario_and_one_with_rules_refuses_another(capsys, tmp_path,
                                                                                       inline_study):
    summary = inline_study / "out" / "summary.json"
    old = json.loads(summary.read_text(encoding="utf-8"))
    old["schema_version"] = 2
    del old["decision"]["rules"]
    (tmp_path / "v2.json").write_text(json.dumps(old))
    status, _, err = _export(capsys, tmp_path, "a2i", "--from", tmp_path / "v2.json")
    assert (status, err) == (1, f"rpa-sim: error: {tmp_path / 'v2.json'}: holds the decided policy's name but not "
                                "its rules (it was written before rpa-sim kept them, schema version 2 or 1): give "
                                "--scenario SCENARIO, the scenario the study ran\n")
    # the scenario edited since the study ran: its policy of that name is not the one the study decided on
    decided = old["decision"]["policy"]
    edited = INLINE_STUDY.replace("0.97", "0.9").replace("rejected_quality: as_predicted", "rejected_quality: correct")
    (tmp_path / "study.yaml").write_text(edited)
    status, _, err = _export(capsys, tmp_path, "a2i", "--from", summary, "--scenario", tmp_path / "study.yaml")
    assert (status, err) == (1, f"rpa-sim: error: {summary}: holds the rules of policy {decided!r} as the study ran "
                                f"it, and --scenario {tmp_path / 'study.yaml'} defines that policy otherwise now: "
                                "leave out --scenario to export the rules the study ran\n")
    assert not (tmp_path / "out.json").exists()


def test_an_output_never_replaces_an_input(capsys, tmp_path):
    write_records(generate_receipts(5, seed=1), tmp_path / "r.jsonl")
    (tmp_path / "map.yaml").write_text(FIELD_MAP)
    for argv, named in ((["label-studio", tmp_path / "r.jsonl", "--policy", "confidence", "--threshold", "0.5"],
                         "DATA"),
                        (["a2i", "--policy", "confidence", "--threshold", "0.5", "--fields", tmp_path / "map.yaml"],
                         "--fields")):
        target = tmp_path / ("r.jsonl" if named == "DATA" else "map.yaml")
        before = target.read_bytes()
        status, _, err = run_cli(capsys, "export-policy", *argv, "--out", target)
        assert (status, err) == (2, f"rpa-sim: error: --out {target} is {named} {target}: an output never replaces "
                                    f"an input\n")
        assert target.read_bytes() == before


def test_rule_formats_with_data_state_every_field_of_it(capsys, tmp_path):
    write_records(generate_receipts(20, seed=2), tmp_path / "r.jsonl")
    table = evaluate_kie(read_records(tmp_path / "r.jsonl"))
    status, rules, _ = _export(capsys, tmp_path, "thresholds", "--data", tmp_path / "r.jsonl", "--policy",
                               "per-field", "--threshold", "0.6", out="t.json")
    assert status == 0 and list(rules["review_below"]["fields"]) == list(table.field_names)
    assert rules["review_below"]["fields"]["total.total_price"] == 0.97
    assert {value for key, value in rules["review_below"]["fields"].items()
            if key not in ("total.total_price", "sub_total.subtotal_price")} == {0.6}
    # with every field named, A2I needs no catch-all key
    status, conditions, _ = _export(capsys, tmp_path, "a2i", "--data", tmp_path / "r.jsonl", "--policy",
                                    "per-field", "--threshold", "0.6")
    keys = [condition["ConditionParameters"]["ImportantFormKey"] for condition in conditions["Conditions"][0]["Or"]]
    assert status == 0 and keys == list(table.field_names)
    status, _, err = _export(capsys, tmp_path, "rossum", "--data", tmp_path / "r.jsonl", "--policy",
                             "per-document-type", "--threshold", "0.6")
    assert (status, err) == (1, "rpa-sim: error: policy 'per-document-type' sets a threshold for document type "
                                "'invoice', which no record has (document types: none)\n")
