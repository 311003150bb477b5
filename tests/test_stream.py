"""Streams to study the live loop on (issue 28, item 3): ``replay SCENARIO --days N``, what each change plants,
measured back from the written logs, determinism, and bad input for the ``stream:`` section."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.conftest import run_cli
from tests.support_stream import CHANGE_DAY, DAYS, SCENARIO, scenario_file


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """The planted stream written by ``replay --days``, its manifest and its rows."""
    from rpa_sim.cli.entry import main

    folder = tmp_path_factory.mktemp("stream")
    out = folder / "logs"
    assert main(["replay", str(scenario_file(folder)), "--days", str(DAYS), "--out-dir", str(out)]) == 0
    rows = [json.loads(line) for path in sorted(out.glob("*.jsonl")) for line in path.read_text().splitlines()]
    return out, json.loads((out / "stream.json").read_text()), rows


def test_replay_writes_a_log_a_day_named_by_its_date_and_a_manifest(replayed):
    out, manifest, rows = replayed
    names = sorted(path.name for path in out.iterdir())
    assert names[0] == "2024-01-01.jsonl" and names[DAYS - 1] == "2024-01-30.jsonl" and names[DAYS] == "stream.json"
    assert len(names) == DAYS + 1
    assert (manifest["policy"], manifest["threshold"], manifest["days"]) == ("confidence", 0.9, DAYS)
    assert manifest["segments"] == ["document_type", "source"]
    assert [change["kind"] for change in manifest["changes"]] == ["mix", "new_template", "degraded_scans",
                                                                  "model_update"]
    assert list(rows[0]) == ["day", "id", "document_type", "source", "key", "confidence", "route", "stratum",
                             "inclusion_probability", "correct"]
    # one document is its rows of one day: a source and a type of its own
    documents: dict[str, set] = {}
    for row in rows:
        documents.setdefault(row["id"], set()).add((row["day"], row["document_type"], row["source"]))
    assert all(len(values) == 1 for values in documents.values())
    assert len(documents) == DAYS * 120


def _cluster_ratio(numerator: np.ndarray, denominator: np.ndarray) -> tuple[float, float]:
    """A ratio of sums over documents and its standard error with documents as clusters."""
    ratio = numerator.sum() / denominator.sum()
    residual = numerator - ratio * denominator
    n = len(denominator)
    return float(ratio), float(math.sqrt(n / (n - 1) * np.sum(residual ** 2)) / denominator.sum())


def _measured(rows: list[dict], segment: dict[str, str], after: bool) -> dict[str, tuple[float, float]]:
    """A segment's auto-accepted error rate, review share and mean confidence, each with its standard error,
    from the log rows before or from the change day."""
    start = f"2024-01-{CHANGE_DAY:02d}"
    per_document: dict[str, np.ndarray] = {}
    for row in rows:
        if (row["day"] >= start) != after or any(row[column] != value for column, value in segment.items()):
            continue
        sums = per_document.setdefault(row["id"], np.zeros(5))
        auto = row["route"] != "review"
        sums += [1, auto, auto and row["correct"] is False, row["confidence"], row["route"] == "review"]
    table = np.array(list(per_document.values()))
    rows_, auto, wrong, confidence, reviewed = table.T
    return {"auto_error": _cluster_ratio(wrong, auto), "review_share": _cluster_ratio(reviewed, rows_),
            "mean_confidence": _cluster_ratio(confidence, rows_)}


def _close(measured: tuple[float, float], planted: float) -> bool:
    estimate, error = measured
    return abs(estimate - planted) <= 4 * error + 1e-9


@pytest.mark.parametrize("position", [1, 2, 3])
def test_each_change_plants_what_the_manifest_says_measured_back_from_the_logs(replayed, position):
    _, manifest, rows = replayed
    change = manifest["changes"][position]
    for when in ("before", "after"):
        measured = _measured(rows, change["segment"], after=when == "after")
        for name in ("auto_error", "review_share", "mean_confidence"):
            assert _close(measured[name], change[when][name]), (change["kind"], when, name, measured[name],
                                                                change[when][name])


def test_the_planted_figures_are_the_changes_settings(replayed):
    _, manifest, _ = replayed
    mix, template, scans, update = manifest["changes"]
    assert mix["shares"] == {"source": {"before": {"a": 0.5, "b": 0.5}, "after": {"a": 0.3, "b": 0.7}}}
    # new_template: the error rate named, at the same confidences and routes
    assert template["after"]["auto_error"] == pytest.approx(0.15, abs=1e-12)
    assert template["after"]["mean_confidence"] == pytest.approx(template["before"]["mean_confidence"], abs=1e-12)
    assert template["after"]["review_share"] == pytest.approx(template["before"]["review_share"], abs=1e-12)
    # degraded_scans: confidences times 0.93, more reviews, and the error rate named at the new routes
    assert scans["after"]["auto_error"] == pytest.approx(0.12, abs=1e-12)
    assert scans["after"]["mean_confidence"] == pytest.approx(0.93 * scans["before"]["mean_confidence"], abs=1e-12)
    assert scans["after"]["review_share"] > scans["before"]["review_share"] + 0.1
    # model_update: more confident, fewer reviews, the newly accepted units err more
    assert update["after"]["mean_confidence"] > update["before"]["mean_confidence"] + 0.04
    assert update["after"]["review_share"] < update["before"]["review_share"] - 0.1
    assert update["after"]["auto_error"] > 2 * update["before"]["auto_error"] and update["turned_wrong"] is None
    assert scans["text"].startswith("degraded_scans from day 16 (2024-01-16) on x / b: mean confidence ")


def test_the_mix_moves_the_sources_shares_measured_back(replayed):
    _, _, rows = replayed
    for after, share in ((False, 0.5), (True, 0.3)):
        documents = {(row["id"], row["source"]) for row in rows if (row["day"] >= "2024-01-16") == after}
        seen = sum(source == "a" for _, source in documents) / len(documents)
        assert abs(seen - share) <= 4 * math.sqrt(share * (1 - share) / len(documents))


def test_the_unchanged_cell_keeps_its_figures(replayed):
    _, _, rows = replayed
    before, after = (_measured(rows, {"document_type": "y", "source": "b"}, after=when) for when in (False, True))
    for name in ("auto_error", "review_share", "mean_confidence"):
        (a, sa), (b, sb) = before[name], after[name]
        assert abs(a - b) <= 4 * math.hypot(sa, sb), name


def test_watch_on_the_written_logs_is_what_the_study_watches_in_memory(replayed, tmp_path):
    """The study's watch over the stream in memory equals ``rpa-sim watch`` over the files replay wrote."""
    from rpa_sim.cli.entry import main
    from rpa_sim.study.run import evaluate_scenario_data, scenario_policies
    from rpa_sim.study.scenario import load_scenario
    from rpa_sim.study.stream import scenario_stream, watched_stream

    out, _, _ = replayed
    assert main(["watch", str(out), "--max-error", "0.05", "--segments", "document_type,source", "--json",
                 "--out", str(tmp_path / "watch.json")]) == 0
    scenario, base = load_scenario(scenario_file(tmp_path))
    policies = scenario_policies(scenario, base)
    table = evaluate_scenario_data(scenario, base, "planted", policies=policies)
    result = watched_stream(scenario, scenario_stream(scenario, table, policies))
    assert json.loads(json.dumps(result.watch.to_dict())) == json.loads((tmp_path / "watch.json").read_text())
    caught = {change.planted.kind: change for change in result.changes}
    assert caught["mix"].touched == 0 and caught["mix"].caught is None
    assert all(caught[kind].caught is not None for kind in ("new_template", "degraded_scans"))


def test_the_same_seed_gives_the_same_bytes_and_a_day_is_the_same_in_a_longer_stream(tmp_path, capsys):
    path = scenario_file(tmp_path, SCENARIO.replace("documents_per_day: 120", "documents_per_day: 20").replace(
        "n: 150", "n: 40"))
    folders = {name: tmp_path / name for name in ("once", "again", "longer", "other")}
    for name, extra in (("once", ["--days", "4"]), ("again", ["--days", "4"]), ("longer", ["--days", "5"]),
                        ("other", ["--days", "4", "--seed", "1"])):
        assert run_cli(capsys, "replay", path, *extra, "--out-dir", folders[name])[0] == 0

    def files(name: str) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(folders[name].glob("*.jsonl"))}

    assert files("once") == files("again") and len(files("once")) == 4
    assert (folders["once"] / "stream.json").read_bytes() == (folders["again"] / "stream.json").read_bytes()
    assert {name: data for name, data in files("longer").items() if name in files("once")} == files("once")
    assert all(files("other")[name] != data for name, data in files("once").items())


def test_a_stream_day_routes_and_audits_as_replay_does():
    """With no change, a day's rows are routed and audited as the policy's replay of the data routes them."""
    from rpa_sim.evaluate.outcomes import evaluate_kie
    from rpa_sim.operate.monitoring.replay import Replayer
    from rpa_sim.operate.stream.generator import Stream
    from rpa_sim.operate.stream.spec import StreamSpec
    from rpa_sim.records.synthetic import generate_receipts
    from rpa_sim.route.policies import load_policy

    table = evaluate_kie(generate_receipts(40, seed=2))
    for name in ("confidence", "document-escalation", "reject-band", "per-field"):
        policy = load_policy(name)
        replayer = Replayer(table, policy, threshold=0.9, audit=0.3)
        moved = replayer.with_confidence(table.confidence)
        assert np.array_equal(moved.reviewed, replayer.reviewed), name
        day = Stream(table, policy, threshold=0.9, spec=StreamSpec(days=2, documents_per_day=30), audit=0.3).day(2)
        assert np.array_equal(day.log.reviewed, replayer.reviewed[day.rows]), name
        assert np.array_equal(day.log.inclusion_probability, replayer.inclusion_probability[day.rows]), name
        assert np.array_equal(day.errors, table.errors()[day.rows]), name
        audited = day.log.audited
        assert np.array_equal(day.log.correct[audited], (~day.errors[audited]).astype(np.int8)), name


def test_records_types_are_drawn_as_often_as_the_data_has_them_or_with_the_sections_shares():
    from rpa_sim.common.errors import InputError
    from rpa_sim.evaluate.outcomes import evaluate_kie
    from rpa_sim.operate.stream.generator import Stream
    from rpa_sim.operate.stream.spec import StreamSpec
    from rpa_sim.records.synthetic import generate_receipts
    from rpa_sim.route.policies import load_policy

    records = [record.model_copy(update={"document_type": "receipt" if index % 4 == 0 else "invoice"})
               for index, record in enumerate(generate_receipts(40, seed=2))]
    table, policy = evaluate_kie(records), load_policy("confidence")

    def stream(**settings) -> Stream:
        return Stream(table, policy, threshold=0.9, spec=StreamSpec.model_validate({"days": 2, **settings}),
                      audit=0.5)

    drawn = stream(documents_per_day=400)
    assert drawn.population.types == ("invoice", "receipt") and drawn.segments_by == ("document_type",)
    assert drawn.population.type_shares.tolist() == [0.75, 0.25]
    day = drawn.day(1)
    # a drawn document keeps its record's type
    assert np.array_equal(day.log.document_type, np.asarray(table.document_types)[table.document_type_codes[day.rows]])
    assert set(stream(document_types={"receipt": 1.0}).day(1).log.document_type.tolist()) == {"receipt"}
    with pytest.raises(InputError, match=r"stream.document_types: 'memo' is no document type of the records "
                                         r"\(invoice, receipt\)"):
        stream(document_types={"memo": 1.0})


def test_questions_are_the_documents_of_a_vqa_stream():
    from rpa_sim.evaluate.outcomes import evaluate_vqa
    from rpa_sim.operate.stream.generator import Stream
    from rpa_sim.operate.stream.spec import StreamSpec
    from rpa_sim.records.synthetic import generate_docvqa
    from rpa_sim.route.policies import load_policy

    table = evaluate_vqa(generate_docvqa(30, seed=1))
    spec = StreamSpec.model_validate({"days": 2, "documents_per_day": 25, "sources": {"a": 1.0}})
    day = Stream(table, load_policy("confidence"), threshold=0.8, spec=spec, audit=0.5).day(2)
    assert len(day.log) == 25 and len(set(day.log.id.tolist())) == 25
    assert np.array_equal(day.log.key, np.asarray(table.field_names, dtype=object)[table.field_codes[day.rows]])
