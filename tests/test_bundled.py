"""Bundled names and paths: one rule for policies and scenarios, and the files behind the names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rpa_sim.bundled import bundled_files, bundled_names, is_path, resolve
from rpa_sim.common.errors import InputError
from rpa_sim.route.policies import bundled_policies, load_policy
from rpa_sim.study.run import run_scenario
from rpa_sim.study.scenario import bundled_scenarios, load_scenario

PROJECT = Path(__file__).resolve().parents[1]
PACKAGE_DATA = PROJECT / "rpa_sim" / "bundled"
DECOY = "name: decoy\ndescription: A local file named like a bundled policy.\nreview_if: {confidence: sweep}\n"


@pytest.mark.parametrize(("kind", "folder", "listing"), [("policy", "policies", bundled_policies),
                                                       ("scenario", "scenarios", bundled_scenarios)])
def test_bundled_names_are_the_yaml_files_of_the_package_folder(kind, folder, listing):
    on_disk = sorted(path.stem for path in (PACKAGE_DATA / folder).glob("*.yaml"))
    assert bundled_names(kind) == list(listing()) == on_disk and len(on_disk) == {"policy": 10, "scenario": 8}[kind]
    for name, file in bundled_files(kind).items():
        assert file.read_text(encoding="utf-8") == (PACKAGE_DATA / folder / f"{name}.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("folder", ["policies", "scenarios"])
def test_the_top_level_folders_are_the_package_folders(folder):
    top = PROJECT / folder
    if not top.exists():
        pytest.skip(f"{top} is absent: not a git checkout (an sdist carries the package folders only)")
    assert top.is_symlink() and top.resolve() == (PACKAGE_DATA / folder).resolve()


@pytest.mark.parametrize(("given", "expected"), [
    ("confidence", False), ("receipts-demo", False), ("my.policy", False),
    ("./confidence", True), ("rules/confidence", True), ("/tmp/confidence", True),
    ("confidence.yaml", True), ("confidence.yml", True), ("Confidence.YAML", True),
    (Path("confidence"), True),
])
def test_what_counts_as_a_path(given, expected):
    assert is_path(given) is expected


def test_a_local_file_named_like_a_bundled_one_wins_only_as_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("confidence.yaml").write_text(DECOY)
    Path("confidence").write_text(DECOY)
    assert load_policy("confidence").name == "confidence"
    assert resolve("policy", "confidence") == bundled_policies()["confidence"]
    for written in ("./confidence", "confidence.yaml", "./confidence.yaml", str(tmp_path / "confidence.yaml"),
                    Path("confidence")):
        assert load_policy(written).name == "decoy", written
        assert resolve("policy", written) == Path(written)


def test_unknown_name_lists_the_bundled_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as error:
        load_scenario("receipts-dmeo")
    assert str(error.value) == ("no bundled scenario named 'receipts-dmeo'; did you mean 'receipts-demo'? "
                                "(bundled: certified-threshold, cost-benefit, docvqa-demo, imperfect-reviewer, "
                                "live-drift, operations-day, policy-comparison, receipts-demo)")
    with pytest.raises(InputError) as error:
        load_policy("strictest")
    assert str(error.value) == ("no bundled policy named 'strictest' (bundled: audited-budget, confidence, "
                                "document-confidence-mean, document-escalation, grounding-gate, grounding-sweep, "
                                "missing-confidence-review, per-document-type, per-field, reject-band)")


@pytest.mark.parametrize("written", ["rules/strict.yaml", "./nosuch.yaml", "nosuch.yml", "./nosuch"])
def test_a_missing_path_is_no_such_file(tmp_path, monkeypatch, written):
    # written as a path, it is a file; the bundled names are no help for a file that is not there
    monkeypatch.chdir(tmp_path)
    for load in (load_policy, load_scenario):
        with pytest.raises(InputError) as error:
            load(written)
        assert str(error.value) == f"{written}: no such file"


def test_a_bare_name_that_is_a_local_file_says_how_to_read_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("strict").write_text(DECOY)
    with pytest.raises(InputError) as error:
        load_policy("strict")
    assert str(error.value).endswith("reject-band); to read the file 'strict', write it as a path: ./strict")
    assert load_policy("./strict").name == "decoy"


def test_unknown_kind_is_quoted():
    with pytest.raises(ValueError, match=r"kind must be one of \['policy', 'scenario'\], got 'policies'"):
        bundled_names("policies")


def test_paths_start_from_relative_to_and_names_ignore_it(tmp_path):
    (tmp_path / "confidence.yaml").write_text(DECOY)
    assert load_policy("confidence.yaml", relative_to=tmp_path).name == "decoy"
    assert load_policy("confidence", relative_to=tmp_path).name == "confidence"
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'other.yaml'}: no such file")):
        load_policy("other.yaml", relative_to=tmp_path)


def test_a_scenario_names_bundled_policies_and_paths_beside_it(tmp_path):
    (tmp_path / "confidence.yaml").write_text(DECOY)
    (tmp_path / "study.yaml").write_text("name: study\ndata: {generate: receipts, n: 20, seed: 1}\n"
                                         "policies: [confidence, ./confidence.yaml]\nthresholds: '0.5'\n")
    scenario, base = load_scenario(tmp_path / "study.yaml")
    assert base == tmp_path
    assert [policy.name for policy in run_scenario(scenario, base).policies] == ["confidence", "decoy"]


def test_a_bundled_scenario_starts_from_its_installed_folder():
    scenario, base = load_scenario("receipts-demo")
    assert scenario.name == "receipts-demo"
    assert (base / "receipts-demo.yaml").read_text(encoding="utf-8") == \
        bundled_scenarios()["receipts-demo"].read_text(encoding="utf-8")
