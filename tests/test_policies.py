"""Policy files: the bundled ones load, bad ones fail with the file and the field."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.route.policies import Policy, bundled_policies, compile_policy, load_policy


def test_bundled_policies_load_and_sweep_one_knob():
    names = set(bundled_policies())
    assert {"confidence", "per-field", "grounding-gate", "grounding-sweep", "document-escalation",
            "audited-budget"} <= names
    for name in names:
        policy = load_policy(name)
        assert policy.review_if.sweeps() == 1 and policy.description


@pytest.mark.parametrize(("yaml_text", "message"), [
    ("name: p\nreview_if: {confidence: 0.5}\n", "exactly one threshold (written `sweep`), this one has 0"),
    ("name: p\nreview_if: {any_of: [{confidence: sweep}, {grounding: sweep}]}\n", "this one has 2"),
    ("name: p\nreview_if: {confidence: 1.5}\n",
     "review_if.confidence: expected a number at most 1 or 'sweep', got 1.5"),
    ("name: p\nreview_if: {confidence: sweep, grounding: 0.5}\n", "exactly one of confidence, grounding"),
    ("name: p\nreview_if: {confidence: sweep}\nfix_additions: true\n", "fix_additions needs escalate: document"),
    ("name: p\nreview_if: {confidence: sweep}\nbudget: {share: 0.2, count: 3}\n", "exactly one of share or count"),
    ("name: p\nreview_if: {confidence: sweep}\naudit: 2\n", "audit"),
    ("name: p\nreview_if: {confidence: sweep}\ncolour: red\n", "colour"),
    ("name: p\nreview_if: [confidence\n", "not valid YAML"),
])
def test_bad_policy_files(tmp_path, yaml_text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml_text)
    with pytest.raises(InputError, match=r"bad\.yaml") as error:
        load_policy(path)
    assert message in str(error.value)


def test_unknown_field_names_fail_fast():
    policy = Policy.model_validate({"name": "p", "review_if": {"confidence": {"below": "sweep",
                                                                             "fields": {"totl": 0.9}}}})
    with pytest.raises(InputError, match="'totl', which no item has"):
        compile_policy(policy, confidence=np.ones(2), grounding=np.ones(2), fields=np.zeros(2, int),
                       field_names=("total",))


def test_entry_thresholds_of_combinations():
    conf = np.array([0.2, 0.6, 0.9, 0.9])
    ground = np.array([0.9, 0.1, np.nan, 0.9])
    def entries(review_if, **extra):
        policy = Policy.model_validate({"name": "p", "review_if": review_if, **extra})
        return compile_policy(policy, confidence=conf, grounding=ground, fields=np.array([0, 0, 1, 1]),
                              field_names=("a", "b"), units=np.array([0, 1, 1, 2])).entry.tolist()
    assert entries({"all_of": [{"confidence": "sweep"}, {"grounding": {"below": 0.5, "missing": "accept"}}]}) == [
        np.inf, 0.6, np.inf, np.inf]
    assert entries({"any_of": [{"confidence": "sweep"}, {"grounding": 0.5}]}) == [0.2, -np.inf, -np.inf, 0.9]
    assert entries({"confidence": {"below": "sweep", "fields": {"b": 0.95}}}) == [0.2, 0.6, -np.inf, -np.inf]
    assert entries({"confidence": "sweep"}, escalate="document") == [0.2, 0.6, 0.6, 0.9]
