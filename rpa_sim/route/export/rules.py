"""A policy at one threshold as a platform sees it: confidence thresholds per field, and the rest in words.

Review platforms route a value to a person when its confidence is below a threshold, set for every
field, for some fields, and sometimes per kind of document (a queue). :func:`policy_at` reduces a
policy at ``τ`` to exactly that, :class:`Thresholds`, and lists every other rule of the policy as a
:class:`Rule` in words: grounding gates, document aggregates, document escalation, budgets,
audits, reject bands, what a value without a confidence does. Each exporter states the rules its
platform can state and turns the others into notes: nothing is dropped silently.

Reducing a condition: a confidence test gives its thresholds (``τ`` in place of ``sweep``); in
``any_of`` a value is reviewed when one child holds, so the thresholds of the confidence children
combine by their maximum, field by field; in ``all_of`` by their minimum. A child that tests
something else (grounding, a document's aggregate) is a rule left out, and the note says which way
that moves the reviews: leaving a child out of ``any_of`` reviews fewer values than the policy,
out of ``all_of`` more.

A policy whose swept knob is a named signal (``signals: {agreement: sweep}``) states its thresholds on that
signal instead (:attr:`PolicyAt.score`): the platform must then be fed the signal as each value's
confidence, which every export says in a note and in its metadata (``score``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rpa_sim.common.errors import InputError
from rpa_sim.route.policies import Condition, DocumentConfidence, Policy, Threshold

__all__ = ["Thresholds", "TypeThresholds", "Rule", "PolicyAt", "ExportedField", "Export", "policy_at",
           "exported_fields", "notes_for", "metadata"]


@dataclass(frozen=True)
class TypeThresholds:
    """The thresholds of one document type: ``below`` for its values (None: the policy-wide ones), and per field."""

    below: float | None
    fields: Mapping[str, float]


@dataclass(frozen=True)
class Thresholds:
    """Confidence thresholds: a value is reviewed when its confidence is below the threshold of its field.

    The most specific setting wins, as in a policy: a document type's field, the type, the field, ``below``.
    A threshold above 1 reviews every value it covers.

    Examples
    --------
    >>> rules = Thresholds(0.8, {"total": 0.97}, {"invoice": TypeThresholds(0.9, {})})
    >>> rules.of("total"), rules.of("date"), rules.of("total", "invoice"), rules.of("date", "receipt")
    (0.97, 0.8, 0.9, 0.8)
    """

    below: float
    fields: Mapping[str, float] = field(default_factory=dict)
    document_types: Mapping[str, TypeThresholds] = field(default_factory=dict)

    def of(self, key: str | None = None, document_type: str | None = None) -> float:
        """The threshold of a value of field ``key`` (None: a field named nowhere) in a ``document_type`` document."""
        by_type = self.document_types.get(document_type) if document_type is not None else None
        if by_type is not None:
            if key is not None and key in by_type.fields:
                return by_type.fields[key]
            if by_type.below is not None:
                return by_type.below
        return self.fields.get(key, self.below) if key is not None else self.below

    def named_fields(self) -> list[str]:
        """The fields that have a threshold of their own somewhere, in the order they are first named."""
        names = [*self.fields, *(key for by_type in self.document_types.values() for key in by_type.fields)]
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class Rule:
    """A rule of a policy that confidence thresholds per field do not state.

    ``name`` says which kind (``grounding``, ``document_confidence``, ``escalate``, ``fix_additions``,
    ``budget``, ``audit``, ``reject_if``, ``missing_confidence``; ``reject_if.grounding`` and
    ``reject_if.document_confidence`` for the tests of a reject band that its thresholds leave out);
    ``text`` says the rule and, for a test left out of a condition, how leaving it out moves the reviews.
    """

    name: str
    text: str


@dataclass(frozen=True)
class PolicyAt:
    """A policy at threshold ``τ``, reduced for platforms (:func:`policy_at`).

    Attributes
    ----------
    policy : Policy
    threshold : float
        ``τ``.
    source : str
        Where ``τ`` comes from, in words (``--threshold``, or a study's decision).
    review : Thresholds or None
        The confidence thresholds ``review_if`` states at ``τ``; None when it tests no confidence.
    reject : Thresholds or None
        Those of ``reject_if`` (a reject band), None without one or when it tests no confidence.
    rules : tuple of Rule
        Everything else the policy says.
    score : str
        What the thresholds apply to: ``confidence``, or the named signal the policy sweeps.
    infeasible : str or None
        Why the decision exported meets not every constraint, when it does not (``--allow-infeasible``):
        each format that has room writes it as ``infeasible`` (``docs/export.md``).
    """

    policy: Policy
    threshold: float
    source: str
    review: Thresholds | None
    reject: Thresholds | None
    rules: tuple[Rule, ...]
    score: str = "confidence"
    infeasible: str | None = None

    def document_types(self) -> list[str]:
        """The document types that have thresholds of their own, in the policy's order."""
        names = [name for rules in (self.review, self.reject) if rules is not None for name in rules.document_types]
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class ExportedField:
    """A field as exported: its rpa-sim ``key`` and its ``names`` on the platform (the first is its name there,
    the others its aliases)."""

    key: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class Export:
    """What an exporter produced: the file's ``text``, the ``notes`` on what it could not state, and a
    one-line ``summary`` of what the file holds."""

    text: str
    notes: tuple[str, ...]
    summary: str


def policy_at(policy: Policy, threshold: float, *, source: str) -> PolicyAt:
    """``policy`` at ``threshold``: its confidence thresholds and its other rules in words.

    Examples
    --------
    >>> from rpa_sim.route.policies import load_policy
    >>> gate = policy_at(load_policy("grounding-gate"), 0.8, source="--threshold")
    >>> gate.review
    Thresholds(below=0.8, fields={}, document_types={})
    >>> [rule.name for rule in gate.rules], gate.rules[0].text.endswith("so fewer values are reviewed than the "
    ...                                                                   "policy reviews")
    (['grounding'], True)
    """
    knob = policy.knob
    score = knob.removeprefix("signals.") if knob.startswith("signals.") else "confidence"
    review, rules = _reduce(policy.review_if, threshold, "review_if", score)
    reject = None
    if policy.reject_if is not None:
        reject, left_out = _reduce(policy.reject_if, threshold, "reject_if", score)
        rules.append(Rule("reject_if", f"reject_if: {_words(policy.reject_if, threshold)} (such a value leaves the "
                                       f"automated flow: neither reviewed nor accepted)"))
        # the parts of a reject band that thresholds do not state matter only where the band's thresholds are stated
        rules += [Rule(f"reject_if.{rule.name}", rule.text) for rule in left_out]
    if policy.escalate == "document":
        rules.append(Rule("escalate", "escalate: document (one value routed sends its whole document to review)"))
    if policy.fix_additions:
        rules.append(Rule("fix_additions", "fix_additions (the reviewer of a whole document adds the values the "
                                           "model missed)"))
    if policy.budget is not None:
        cap = (f"{policy.budget.share:g} of the values" if policy.budget.share is not None
               else f"{policy.budget.count:,} values")
        rules.append(Rule("budget", f"budget: at most {cap} are reviewed, the least confident first"))
    if policy.audit:
        rules.append(Rule("audit", f"audit: {policy.audit:g} of the auto-accepted values are checked at random"))
    if policy.missing_confidence is not None:
        setting = policy.missing_confidence
        does = ("is reviewed" if setting == "review" else "is accepted" if setting == "accept"
                else f"counts as the confidence {setting:g}")
        rules.append(Rule("missing_confidence", f"missing_confidence: {policy.missing_confidence} (a value without "
                                                f"a confidence {does})"))
    return PolicyAt(policy, threshold, source, review, reject, tuple(rules), score)


def _reduce(condition: Condition, threshold: float, where: str,
            score: str) -> tuple[Thresholds | None, list[Rule]]:
    """The thresholds a condition states on ``score`` (the confidence or a signal), and its other tests."""
    signal = condition.signal
    if score == "confidence" and condition.confidence is not None:
        return _thresholds(condition.confidence, threshold), []
    if signal is not None and signal[0] == score:
        return _thresholds(signal[1], threshold), []
    if condition.own_test() is not None:
        name = next(name for name in ("confidence", "grounding", "document_confidence")
                    if getattr(condition, name) is not None) if signal is None else f"signals.{signal[0]}"
        return None, [Rule(name, f"{where}: {_words(condition, threshold)}")]
    children = _children(condition)
    combinator = "any_of" if condition.any_of else "all_of"
    reduced = [_reduce(child, threshold, where, score) for child in children]
    stated = [rules for rules, _ in reduced if rules is not None]
    left_out = [rule for _, rules in reduced for rule in rules]
    if not stated:
        return None, left_out
    moves = "fewer" if combinator == "any_of" else "more"
    verb = "rejected" if where == "reject_if" else "reviewed"
    # annotated once, where a stated sibling makes the direction plain; a deeper note already says it
    left_out = [rule if "; left out of" in rule.text else
                Rule(rule.name, f"{rule.text}; left out of {combinator}, so {moves} values are {verb} than the "
                                f"policy {verb.removesuffix('ed')}s") for rule in left_out]
    return _combined(stated, max if condition.any_of else min), left_out


def _thresholds(test: Threshold, threshold: float) -> Thresholds:
    below = threshold if isinstance(test.below, str) else test.below  # the one text a threshold takes is sweep
    return Thresholds(below, dict(test.fields),
                      {name: TypeThresholds(by_type.below, dict(by_type.fields))
                       for name, by_type in test.document_types.items()})


def _combined(parts: Sequence[Thresholds], pick: Callable[[Iterable[float]], float]) -> Thresholds:
    """Thresholds that review a value exactly when ``pick`` (max: any part, min: every part) of the parts would."""
    if len(parts) == 1:
        return parts[0]
    keys = list(dict.fromkeys(key for part in parts for key in part.named_fields()))
    types = list(dict.fromkeys(name for part in parts for name in part.document_types))
    by_type = {}
    for name in types:
        below = pick(part.of(None, name) for part in parts)
        # a field's entry that equals its type's threshold says nothing more
        fields = {key: value for key in keys if (value := pick(part.of(key, name) for part in parts)) != below}
        by_type[name] = TypeThresholds(below, fields)
    return Thresholds(pick(part.below for part in parts), {key: pick(part.of(key) for part in parts) for key in keys},
                      by_type)


def _children(condition: Condition) -> list[Condition]:
    """The conditions a combinator joins: a condition that is no test is ``any_of`` or ``all_of`` (validated)."""
    children = condition.any_of or condition.all_of
    assert children is not None, "a condition is a test or a combinator"
    return children


def _words(condition: Condition, threshold: float) -> str:
    """A condition in words, ``τ`` shown with its value."""
    test = condition.own_test()
    if test is None:
        combinator = "any of" if condition.any_of else "all of"
        return f"{combinator} ({'; '.join(_words(child, threshold) for child in _children(condition))})"
    below = f"τ = {threshold:g}" if test.swept else f"{test.below:g}"
    if isinstance(test, DocumentConfidence):
        return f"the document's {test.aggregate.replace('_', ' ')} confidence below {below}"
    signal = condition.signal
    score = ("confidence" if condition.confidence is not None else "grounding" if signal is None
             else f"the signal {signal[0]!r}")
    words = f"{score} below {below}"
    named = [f"{len(test.fields)} field{'s' if len(test.fields) != 1 else ''}"] if test.fields else []
    named += [f"{len(test.document_types)} document type{'s' if len(test.document_types) != 1 else ''}"] \
        if test.document_types else []
    if named:
        words += f" (thresholds of their own for {' and '.join(named)})"
    if condition.grounding is not None or signal is not None:
        words += f" (a value without one is {'reviewed' if test.missing == 'review' else 'accepted'})"
    return words


def exported_fields(at: PolicyAt, *, fields: Sequence[str] = (), field_map: Mapping[str, str | None] | None = None,
                    map_source: str | None = None, known: Sequence[str] | None = None) -> list[ExportedField]:
    """The fields a rule format names, each with its platform names.

    Parameters
    ----------
    at : PolicyAt
    fields : sequence of str
        Keys named on the command line (``--field``): their platform name is the key.
    field_map : mapping of str to str or None, optional
        Platform names to keys, as the importers read ``--fields`` (None drops a name): a key's names
        are those that map to it, in the map's order.
    map_source : str, optional
        The map's file, for messages.
    known : sequence of str, optional
        The fields of a data set: every one of them is exported, and any other name is unknown.

    Raises
    ------
    InputError
        For a key that ``known`` lacks, or a field the policy sets a threshold for that neither the data
        nor the names given hold (the platform would never see its threshold).
    """
    mapped = {name: key for name, key in (field_map or {}).items() if key is not None}
    given = list(dict.fromkeys([*fields, *mapped.values()]))
    if known is not None:
        for key in given:
            if key not in known:
                where = f"--fields {map_source}" if key not in fields else "--field"
                raise InputError(f"{where} names the field {key!r}, which the data does not have (fields: "
                                 f"{', '.join(known) or 'none'})")
    universe = list(known) if known is not None else given
    policy_fields = [key for rules in (at.review, at.reject) if rules is not None for key in rules.named_fields()]
    if known is not None or given:
        for key in policy_fields:
            if key not in universe:
                holder = "the data does not have" if known is not None else "--field and --fields do not name"
                raise InputError(f"policy {at.policy.name!r} sets a threshold for {key!r}, which {holder} (fields: "
                                 f"{', '.join(universe) or 'none'})")
    keys = list(dict.fromkeys([*universe, *given, *policy_fields]))
    return [ExportedField(key, tuple(name for name, mapped_key in mapped.items() if mapped_key == key) or (key,))
            for key in keys]


def notes_for(platform: str, at: PolicyAt, *, states: Iterable[str], document_type: str | None,
              advice: Mapping[str, str] | None = None) -> list[str]:
    """Notes for every rule of ``at`` that ``platform`` does not state (``states``: the rule names it does).

    ``advice`` adds, after the note of a rule (by name), what comes nearest on the platform.
    Thresholds by document type are stated for ``document_type`` when one is chosen; otherwise a
    platform that does not state them gets a note naming the types.
    """
    stated, advice = set(states), advice or {}
    notes = [f"{platform} cannot state {rule.text}" + (f"; {advice[rule.name]}" if rule.name in advice else "")
             for rule in at.rules if rule.name not in stated
             and not (rule.name.startswith("reject_if.") and "reject_if" not in stated)]
    if at.score != "confidence":
        made = (" (rpa-sim's monotone combination of the data's signals, whose weights rpa-sim signals --json "
                "gives: the pipeline computes it)" if at.score == "fused" else "")
        notes.insert(0, f"the thresholds apply to the signal {at.score!r}{made}: the platform must be fed that "
                        f"signal as each value's confidence, in place of the model's confidence")
    types = at.document_types()
    if types and document_type is None and "document_types" not in stated:
        notes.append(f"{platform} cannot state thresholds by document type ({', '.join(types)}): the policy-wide "
                     f"thresholds are exported; export one file per type with --document-type TYPE")
    if document_type is not None and document_type not in types:
        notes.append(f"document type {document_type!r} has no thresholds of its own in policy {at.policy.name!r}: "
                     f"the policy-wide ones are exported")
    return notes


def metadata(at: PolicyAt, notes: Sequence[str], **more: Any) -> dict[str, Any]:
    """What an export says about itself where its format has room: the policy, ``τ``, its source, the mark of
    a decision that meets not every constraint (``infeasible``: why) and the notes."""
    # the score is said when it is a signal: exports of confidence policies stay as they were
    score = {} if at.score == "confidence" else {"score": at.score}
    mark = {} if at.infeasible is None else {"infeasible": at.infeasible}
    return {"policy": at.policy.name, "threshold": at.threshold, "threshold_from": at.source, **mark,
            "knob": at.policy.knob, **score, **more, "notes": list(notes)}
