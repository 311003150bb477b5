"""A study's result as typed, frozen dataclasses: what ``summary.json`` holds (``docs/summary.md``).

:class:`StudySummary` is the whole result of ``rpa-sim run``: the scenario's
settings, the data, per policy its curve figures and operating points, the
operation, the monitoring and the decision. ``summary.json`` is its
serialisation: :meth:`StudySummary.from_json` reads one (validating every key
and type, naming the key path of the first problem) and
:meth:`StudySummary.to_json` writes it back byte for byte. Lists are tuples,
JSON objects whose keys are data (targets, fields, methods) are
:class:`FrozenMap`, floats are kept exactly (JSON writes them by ``repr``).

A key the summary leaves out when it has nothing to say (``rejected``,
``monte_carlo``, ``operations``, ...) is None here; a key written as null is
None too, and ``docs/summary.md`` says which is which.

Examples
--------
>>> point = OperatingPoint(threshold=0.9, auto_rate=0.75, metric=0.95, reviewed=120.0, cost=None)
>>> text = jsontext.dumps(encoded(point))
>>> text
'{"threshold": 0.9, "auto_rate": 0.75, "metric": 0.95, "reviewed": 120.0, "cost": null}'
>>> decoded(OperatingPoint, json.loads(text), "point") == point
True
>>> decoded(OperatingPoint, {**json.loads(text), "threshold": "0.9"}, "policies[1].cost_optimum")
Traceback (most recent call last):
...
rpa_sim.common.errors.InputError: policies[1].cost_optimum.threshold: expected a number, got a string: "0.9"
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cache
from typing import Any, Generic, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ValidationError

from rpa_sim.common import jsontext
from rpa_sim.common.errors import InputError, shown
from rpa_sim.operate.monitoring.audit_plan import AuditPlan
from rpa_sim.operate.queue.spec import OperationsSpec
from rpa_sim.route.costs import CostModel
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.study.decision import Decision

__all__ = ["SCHEMA_VERSION", "FrozenMap", "StudySummary", "KieData", "VqaData", "Baseline", "Baselines",
           "Reliability", "GroupCalibration", "Calibration", "OperatingPoint", "CostByKind", "SavingsByKind",
           "CostOptimum", "AtThreshold", "Certification", "NotCertifiable", "MonteCarlo", "PolicyResult",
           "OptimizedThresholds", "OperationsTeam", "Simulation", "OperationsPoint", "OperationsGridRow",
           "PolicyOperations", "Operations", "MethodCoverage", "FirstDays", "AuditWidths", "MonitoredPolicy",
           "Monitoring", "encoded", "decoded"]

#: The version of ``summary.json`` this rpa-sim writes and reads; a summary without the key is version 1.
SCHEMA_VERSION = 2

V = TypeVar("V")


class FrozenMap(Mapping[str, V], Generic[V]):
    """A read-only JSON object whose keys are data (targets, fields, methods), in the order written.

    >>> FrozenMap({"0.95": 0.8})["0.95"], FrozenMap({"a": 1}) == {"a": 1}
    (0.8, True)
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, V] | None = None) -> None:
        self._items = dict(items or {})

    def __getitem__(self, key: str) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"

    def __getstate__(self) -> dict[str, V]:
        return self._items

    def __setstate__(self, items: dict[str, V]) -> None:
        self._items = items


def _left_out() -> Any:
    """A key the summary leaves out when it has no value (None here); never written as null."""
    return field(default=None, metadata={"left_out": True})


def _present_when(name: str) -> Any:
    """A key present exactly when the field ``name`` (read first) is neither None nor false; None when absent."""
    return field(default=None, metadata={"present_when": name})


# -- the scenario's data -------------------------------------------------------------------------


@dataclass(frozen=True)
class KieData:
    """The data of a KIE study: its predictions and corpus KIEval figures before review (``score --json``).

    Counts are of entities (groups for ``groups_*``); ratios are None when undefined.
    """

    predictions: int
    documents: int
    entities_gt: int
    entities_pred: int
    tp: int
    fp: int
    fn: int
    substitutions: int
    additions: int
    deletions: int
    entity_f1: float | None
    group_f1: float | None
    kieval_aligned: float | None
    group_aligned: float | None
    ignored_empty: int
    precision: float | None
    recall: float | None
    grouping_blind_entity_f1: float | None
    groups_gt: int
    groups_pred: int
    groups_paired: int
    groups_tp: int
    value_match: str


@dataclass(frozen=True)
class VqaData:
    """The data of a VQA study: its predictions and corpus figures before review (``score --json``)."""

    predictions: int
    questions: int
    anls: float | None
    accuracy: float | None
    smudge: float | None
    match: float | None
    grounding: float | None
    alpha: float
    evidence_iou: float | None
    absolute_deviation: float | None
    absolute_deviation_compared: int


@dataclass(frozen=True)
class Baseline:
    """Reviewing nothing or everything: the metric after review, the items reviewed, the cost (None without costs)."""

    metric: float | None
    reviewed: float
    cost: float | None


@dataclass(frozen=True)
class Baselines:
    """The two baselines every policy is compared with."""

    review_none: Baseline
    review_all: Baseline


@dataclass(frozen=True)
class Reliability:
    """The reliability diagram: per non-empty equal-width confidence bin, its bounds, size, mean confidence
    and share of right predictions."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    count: tuple[int, ...]
    mean_confidence: tuple[float, ...]
    accuracy: tuple[float, ...]


@dataclass(frozen=True)
class GroupCalibration:
    """The calibration of one field or document type."""

    name: str
    predictions: int
    mean_confidence: float | None
    accuracy: float | None
    ece_equal_width: float | None
    ece_equal_mass: float | None


@dataclass(frozen=True)
class Calibration:
    """How well the confidences match the share of right predictions (the predictions that have one)."""

    ece_equal_width: float | None
    ece_equal_mass: float | None
    aurc: float | None
    reliability: Reliability
    by_field: tuple[GroupCalibration, ...]
    by_document_type: tuple[GroupCalibration, ...] | None = _left_out()
    without_confidence: int | None = _left_out()


# -- the policies --------------------------------------------------------------------------------


@dataclass(frozen=True)
class OperatingPoint:
    """One threshold of a policy's curve with its figures: :class:`rpa_sim.route.compare.OperatingPoint` as the
    summary writes it, None where a figure is undefined (``cost`` also without costs)."""

    threshold: float
    auto_rate: float | None
    metric: float | None
    reviewed: float
    cost: float | None


@dataclass(frozen=True)
class CostByKind:
    """A cost split by kind, in the scenario's currency: review labour, rostered staffing, residual errors,
    rejected items; ``per`` says for what volume (``"day"`` or ``"data"``) where the summary says it."""

    review: float | None
    staffing: float | None
    errors: float | None
    rejected: float | None
    total: float | None
    currency: str | None
    per: str | None = _left_out()


@dataclass(frozen=True)
class SavingsByKind:
    """What a point saves against reviewing everything, by kind of cost."""

    review: float | None
    staffing: float | None
    errors: float | None
    rejected: float | None


@dataclass(frozen=True)
class CostOptimum(OperatingPoint):
    """A policy's cheapest threshold on the swept grid, and what it saves against the baselines."""

    savings_vs_review_all: float | None
    savings_vs_review_none: float | None
    breakdown: CostByKind | None = _left_out()
    reviews_saved: float | None = _left_out()
    savings_by_kind: SavingsByKind | None = _left_out()
    edge_of_range: bool | None = _left_out()


@dataclass(frozen=True)
class AtThreshold:
    """A policy's figures at its certified threshold."""

    auto_rate: float | None
    metric: float | None
    cost: float | None


@dataclass(frozen=True)
class Certification:
    """A certified threshold (Learn-then-Test, ``certify --json``) with its guarantee in words; ``threshold``
    None when no threshold can be certified."""

    threshold: float | None
    max_error: float
    delta: float
    calibration_n: int
    accepted_n: int
    accepted_errors: int
    p_value: float | None
    upper_bound: float | None
    holdout_auto_rate: float | None
    holdout_error: float | None
    guarantee: str
    at_threshold: AtThreshold | None = _present_when("threshold")


@dataclass(frozen=True)
class NotCertifiable:
    """A policy that cannot be certified (a review budget can force items through): why, in words."""

    threshold: None
    guarantee: str


#: The statistics of a Monte Carlo spread, in the order of its keys.
_STATISTICS = ("mean", "std", "low", "high")


@dataclass(frozen=True)
class MonteCarlo:
    """Seeded replays at a policy's chosen thresholds: per threshold, the mean, standard deviation and
    5% and 95% quantiles of the metric and of the auto-rate.

    In JSON the metric's keys carry its name (``mean_kieval_aligned``); ``metric`` is that name.
    """

    replicates: int
    seed: int
    thresholds: tuple[float, ...]
    metric: str
    mean_metric: tuple[float | None, ...]
    mean_auto_rate: tuple[float | None, ...]
    std_metric: tuple[float | None, ...]
    std_auto_rate: tuple[float | None, ...]
    low_metric: tuple[float | None, ...]
    low_auto_rate: tuple[float | None, ...]
    high_metric: tuple[float | None, ...]
    high_auto_rate: tuple[float | None, ...]

    @classmethod
    def _json_in(cls, value: dict[str, Any], path: str) -> dict[str, Any]:
        if "metric" in value:
            raise InputError("unknown key", field=_joined(path, "metric"))
        names = [key[len("mean_"):] for key in value if key.startswith("mean_") and key != "mean_auto_rate"]
        if len(names) != 1:
            raise InputError(f"expected one mean_<metric> key besides mean_auto_rate, got {shown(names)}",
                             field=path)
        (metric,) = names
        renamed = {f"{statistic}_{metric}": f"{statistic}_metric" for statistic in _STATISTICS}
        return {**{renamed.get(key, key): item for key, item in value.items()}, "metric": metric}

    def _json_out(self, value: dict[str, Any]) -> dict[str, Any]:
        renamed = {f"{statistic}_metric": f"{statistic}_{self.metric}" for statistic in _STATISTICS}
        return {renamed.get(key, key): item for key, item in value.items() if key != "metric"}


@dataclass(frozen=True)
class PolicyResult:
    """One policy of the study: its curve's summary figures and operating points.

    ``operating_points`` maps each target (written ``f"{target:g}"``) to the
    threshold that automates most while reaching it, None when none does.
    """

    policy: str
    description: str
    knob: str
    auc: float | None
    auto_rate_range: tuple[float | None, float | None]
    operating_points: FrozenMap[OperatingPoint | None]
    cost_optimum: CostOptimum | None
    certified: Certification | NotCertifiable | None
    dominated_by: tuple[str, ...]
    rejected: int | None = _left_out()
    monte_carlo: MonteCarlo | None = _left_out()


@dataclass(frozen=True)
class OptimizedThresholds:
    """Per-field thresholds (or per document type and field) that automate most while reaching one target.

    ``thresholds`` maps a field (or a document type, to its fields) to the
    confidence below which it is reviewed, None when it is always reviewed.
    It, ``auto_rate``, ``metric`` and ``cost`` are present when ``feasible``.
    """

    feasible: bool
    optimal: bool
    best_single_threshold: OperatingPoint | None
    thresholds: FrozenMap[float | FrozenMap[float | None] | None] | None = _present_when("feasible")
    auto_rate: float | None = _present_when("feasible")
    metric: float | None = _present_when("feasible")
    cost: float | None = _present_when("feasible")


# -- the operation -------------------------------------------------------------------------------


@dataclass(frozen=True)
class OperationsTeam:
    """The scenario's team: its shifts ``(start_hour, end_hour, scheduled)``, per hour of a day those
    scheduled and those on the floor after shrinkage, and what it costs a day."""

    shifts: tuple[tuple[float, float, int], ...]
    scheduled_per_hour: tuple[int, ...]
    on_floor_per_hour: tuple[int, ...]
    cost_per_day: float | None


@dataclass(frozen=True)
class Simulation:
    """One simulation of the team at a threshold's workload; ``backlog_by_hour`` only at operating points."""

    tasks: int
    service_level: float | None
    service_level_reviewed: float | None
    utilisation: float | None
    released: int
    p_breach: float | None
    turnaround_p50_seconds: float | None
    turnaround_p90_seconds: float | None
    turnaround_p99_seconds: float | None
    backlog_at_day_end: tuple[int, ...]
    backlog_by_hour: tuple[float, ...] | None = _left_out()


@dataclass(frozen=True)
class OperationsPoint:
    """The operation at one of a policy's operating points: its work, the reviewers it needs per hour, their
    cost, the team's simulation and the quality once releases are counted."""

    point: str
    threshold: float
    opened_share: float
    items_per_document: float
    handle_seconds: float
    documents_opened_per_day: float
    peak_load: float
    peak_reviewers_needed: int
    peak_scheduled_needed: int
    staffing_cost_per_day: float | None
    load_per_hour: tuple[float, ...]
    reviewers_needed_per_hour: tuple[int, ...]
    scheduled_needed_per_hour: tuple[int, ...]
    erlang_service_level_per_hour: tuple[float | None, ...]
    unstaffed_hours: tuple[int, ...]
    overloaded_hours: tuple[int, ...]
    simulated: Simulation
    quality: float | None
    released_share: float
    quality_with_releases: float | None


@dataclass(frozen=True)
class OperationsGridRow:
    """The operation at one threshold of a fixed grid: an :class:`OperationsPoint` without the per-hour lists."""

    threshold: float
    opened_share: float
    items_per_document: float
    handle_seconds: float
    documents_opened_per_day: float
    peak_load: float
    peak_reviewers_needed: int
    peak_scheduled_needed: int
    staffing_cost_per_day: float | None
    simulated: Simulation
    quality: float | None
    released_share: float
    quality_with_releases: float | None


@dataclass(frozen=True)
class PolicyOperations:
    """One policy's operation: at its operating points and along a τ grid."""

    policy: str
    points: tuple[OperationsPoint, ...]
    grid: tuple[OperationsGridRow, ...]


@dataclass(frozen=True)
class Operations:
    """The review operation behind the thresholds (the scenario's ``operations:`` section)."""

    settings: OperationsSpec
    hourly_cost: float | None
    days: int
    documents_per_day: float
    arrivals_per_hour: tuple[float, ...]
    team: OperationsTeam
    policies: tuple[PolicyOperations, ...]


# -- monitoring ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MethodCoverage:
    """How one estimation method did over the replayed days, and whether its intervals can be trusted."""

    coverage: float | None
    coverage_error: float | None
    mean_width: float | None
    bias: float | None
    quality_coverage: float | None
    reliable: bool | None = _left_out()
    reason: str | None = _left_out()


@dataclass(frozen=True)
class FirstDays:
    """The first replayed days: each day's seed, naive figure, and per method its estimate and interval."""

    seed: tuple[int, ...]
    naive: tuple[float | None, ...]
    estimate: FrozenMap[tuple[float | None, ...]]
    low: FrozenMap[tuple[float | None, ...]]
    high: FrozenMap[tuple[float | None, ...]]


@dataclass(frozen=True)
class AuditWidths:
    """What auditing more buys: per uniform audit rate, the audits a day and each method's mean width."""

    audit_rates: tuple[float, ...]
    expected_audits: tuple[float, ...]
    mean_width: FrozenMap[tuple[float | None, ...]]


@dataclass(frozen=True)
class MonitoredPolicy:
    """One monitored policy at its threshold; every figure None (and ``note`` why) when there is nothing to
    monitor."""

    policy: str
    threshold: float | None
    threshold_from: str
    rows: int | None
    reviewed: int | None
    auto_accepted: int | None
    audit_rate: float | None
    expected_audits: float | None
    true_auto_error: float | None
    naive_mean: float | None
    naive_bias: float | None
    methods: FrozenMap[MethodCoverage] | None
    first_days: FirstDays | None
    widths: AuditWidths | None
    note: str | None


@dataclass(frozen=True)
class Monitoring:
    """Production monitoring replayed (the scenario's ``monitoring:`` section) and its findings per policy."""

    days: int
    seed: int
    confidence_level: float
    methods: tuple[str, ...] | None
    audit_rate: float | None
    audit_plan: AuditPlan | None
    days_shown: int
    audit_rates: tuple[float, ...]
    width_days: int
    reviewer: Reviewer
    assumptions: str
    policies: tuple[MonitoredPolicy, ...]


# -- the whole study -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StudySummary:
    """Everything a study found: what ``summary.json`` holds, field for field (``docs/summary.md``).

    ``schema_version`` is None for a summary written before the key existed
    (version 1); ``calibration`` None when no prediction has a confidence
    (written ``{}``).
    """

    scenario: str
    description: str
    task: str
    metric: str
    data: KieData | VqaData
    reviewer: Reviewer
    costs: CostModel | None
    thresholds: str
    targets: tuple[float, ...]
    calibration: Calibration | None
    baselines: Baselines
    policies: tuple[PolicyResult, ...]
    optimized_per_field: FrozenMap[OptimizedThresholds]
    schema_version: int | None = _left_out()
    optimized_per_document_type: FrozenMap[OptimizedThresholds] | None = _left_out()
    operations: Operations | None = _left_out()
    monitoring: Monitoring | None = _left_out()
    decision: Decision | None = _left_out()

    @classmethod
    def from_json(cls, source: str | bytes | Mapping[str, Any]) -> StudySummary:
        """Read a summary: the text of ``summary.json`` or its parsed object.

        Raises
        ------
        InputError
            When the text is not JSON, the summary is of a newer schema
            version, or a key is unknown, missing or of the wrong type (the
            message names its key path, e.g. ``policies[1].cost_optimum.threshold``).
        """
        if isinstance(source, Mapping):
            value = source
        else:
            try:
                value = json.loads(source, parse_constant=_refuse_constant)
            except (ValueError, RecursionError) as problem:  # RecursionError: nested deeper than Python reads
                raise InputError(f"summary.json is not JSON: {problem}") from None
        if not isinstance(value, Mapping):
            raise InputError(f"summary.json holds {_kind_of(value)}, not an object")
        version = value.get("schema_version")
        if _json_kind(version) == "integer" and version > SCHEMA_VERSION:
            raise InputError(f"summary.json schema_version {version} is newer than this rpa-sim reads "
                             f"({SCHEMA_VERSION})")
        summary = decoded(cls, value, "")
        if summary.schema_version is not None and summary.schema_version < 2:
            raise InputError(f"{summary.schema_version} is not a schema version: a summary without the key is "
                             f"version 1, and versions with the key start at 2", field="schema_version")
        return summary

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON values, keys in the order ``summary.json`` has them."""
        return encoded(self)

    def to_json(self) -> str:
        """The text of ``summary.json``, as ``rpa-sim run --out-dir`` writes it."""
        return jsontext.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def _json_in(cls, value: dict[str, Any], path: str) -> dict[str, Any]:
        if value.get("calibration") == {}:
            return {**value, "calibration": None}
        if "calibration" in value and value["calibration"] is None:
            raise InputError("expected an object ({} when no prediction has a confidence), got null",
                             field=_joined(path, "calibration"))
        return value

    def _json_out(self, value: dict[str, Any]) -> dict[str, Any]:
        # the version first, where a reader looks before anything else
        version = {} if self.schema_version is None else {"schema_version": value.pop("schema_version")}
        return {**version, **value, "calibration": {} if self.calibration is None else value["calibration"]}


# -- reading and writing -------------------------------------------------------------------------

_JSON_KINDS = {"null": "null", "boolean": "true or false", "integer": "an integer", "number": "a number",
               "string": "a string", "list": "a list", "object": "an object"}


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    return "object" if isinstance(value, Mapping) else type(value).__name__


def _kind_of(value: Any) -> str:
    """What a JSON value is, as a message says it: ``a string: "0.9"``."""
    kind = _JSON_KINDS.get(_json_kind(value), f"a Python {type(value).__name__}")
    return kind if value is None or kind in ("a list", "an object") else f"{kind}: {shown(value)}"


def _joined(path: str, key: str) -> str:
    """``path.key``, or ``path["key"]`` for a key that is not a plain name."""
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{shown(key)}]"


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _members(kind: Any) -> tuple[Any, ...]:
    return get_args(kind) if get_origin(kind) in (Union, types.UnionType) else (kind,)


def _expected(kind: Any) -> str:
    """What a type takes, as a message says it."""
    words = []
    for member in _members(kind):
        origin = get_origin(member)
        if member is type(None):
            words.append("null")
        elif origin is Literal:
            words.append("one of " + ", ".join(shown(choice) for choice in get_args(member)))
        elif origin is tuple:
            words.append("a list")
        elif is_dataclass(member) or origin is FrozenMap or (isinstance(member, type) and
                                                             issubclass(member, BaseModel)):
            words.append("an object")
        else:
            words.append(_JSON_KINDS[{bool: "boolean", int: "integer", float: "number", str: "string"}[member]])
    unique = list(dict.fromkeys(words))
    return " or ".join(unique)


def _takes(kind: Any, value: Any) -> bool:
    """Whether a JSON value is of the kind a (non-union) type takes; its content is checked apart."""
    found = _json_kind(value)
    origin = get_origin(kind)
    if kind is type(None):
        return found == "null"
    if origin is Literal:
        return found == "string"
    if origin is tuple:
        return found == "list"
    if is_dataclass(kind) or origin is FrozenMap or (isinstance(kind, type) and issubclass(kind, BaseModel)):
        return found == "object"
    return found in {bool: ("boolean",), int: ("integer",), float: ("integer", "number"), str: ("string",)}[kind]


def _fit(cls: type, value: Mapping[str, Any]) -> tuple[bool, int]:
    """How well an object fits a dataclass: whether its keys are exactly those the class reads, and how many
    it shares (a union of dataclasses takes the best fit)."""
    names = {item.name for item in fields(cls)}
    always = {item.name for item in fields(cls) if not item.metadata}
    keys = set(value)
    return keys <= names and always <= keys, len(keys & names)


def decoded(kind: Any, value: Any, path: str) -> Any:
    """The JSON ``value`` at key ``path`` as ``kind`` (a dataclass, a FrozenMap, a tuple, a scalar, a union).

    Raises
    ------
    InputError
        Naming the key path of the first value that does not fit.
    """
    candidates = [member for member in _members(kind) if _takes(member, value)]
    if not candidates:
        raise InputError(f"expected {_expected(kind)}, got {_kind_of(value)}", field=path or None)
    if len(candidates) > 1:
        candidates.sort(key=lambda member: _fit(member, value), reverse=True)
    kind = candidates[0]
    origin = get_origin(kind)
    if origin is Literal:
        if value not in get_args(kind):
            raise InputError(f"expected {_expected(kind)}, got {shown(value)}", field=path or None)
        return value
    if origin is tuple:
        items = get_args(kind)
        if len(items) == 2 and items[1] is Ellipsis:
            return tuple(decoded(items[0], item, f"{path}[{index}]") for index, item in enumerate(value))
        if len(value) != len(items):
            raise InputError(f"expected a list of {len(items)}, got {len(value)} items", field=path or None)
        return tuple(decoded(item_kind, item, f"{path}[{index}]")
                     for index, (item_kind, item) in enumerate(zip(items, value)))
    if origin is FrozenMap:
        (item_kind,) = get_args(kind)
        return FrozenMap({key: decoded(item_kind, item, f"{path}[{shown(key)}]") for key, item in value.items()})
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return _validated(kind, value, path)
    if is_dataclass(kind):
        return _decoded_object(kind, value, path)
    return value


def _validated(model: type[BaseModel], value: Mapping[str, Any], path: str) -> BaseModel:
    """A scenario section echoed in the summary, read by the scenario's own model (strictly: no string for a
    number)."""
    try:
        return model.model_validate(value, strict=True)
    except ValidationError as error:
        first = error.errors()[0]
        where = path
        for part in first["loc"]:
            where = f"{where}[{part}]" if isinstance(part, int) else _joined(where, str(part))
        raise InputError(first["msg"], field=where or None) from None


def _decoded_object(cls: type, value: Mapping[str, Any], path: str) -> Any:
    reader = getattr(cls, "_json_in", None)
    if reader is not None:
        value = reader(dict(value), path)
    names = {item.name for item in fields(cls)}
    for key in value:
        if key not in names:
            raise InputError("unknown key", field=_joined(path, key))
    hints = _hints(cls)
    found: dict[str, Any] = {}
    for item in fields(cls):
        where = _joined(path, item.name)
        condition = item.metadata.get("present_when")
        if condition is not None:
            present = found[condition] is not None and found[condition] is not False
            if not present:
                if item.name in value:
                    raise InputError(f"present only when {condition} is neither null nor false", field=where)
                found[item.name] = None
                continue
        elif item.metadata.get("left_out"):
            if item.name not in value:
                found[item.name] = None
                continue
            if value[item.name] is None:
                raise InputError("null: a summary leaves this key out when it has no value", field=where)
        if item.name not in value:
            raise InputError("missing key", field=where)
        kind = hints[item.name]
        if item.metadata.get("left_out"):  # None stands for the absent key, so the value itself is never null
            kind = Union[tuple(member for member in _members(kind) if member is not type(None))]
        found[item.name] = decoded(kind, value[item.name], where)
    return cls(**found)


def encoded(value: Any) -> Any:
    """A result object as plain JSON values (dicts, lists, numbers, strings, None), keys in summary order."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if is_dataclass(value):
        found: dict[str, Any] = {}
        for item in fields(value):
            own = getattr(value, item.name)
            condition = item.metadata.get("present_when")
            if condition is not None and (getattr(value, condition) is None or getattr(value, condition) is False):
                continue
            if item.metadata.get("left_out") and own is None:
                continue
            found[item.name] = encoded(own)
        writer = getattr(value, "_json_out", None)
        return found if writer is None else writer(found)
    if isinstance(value, FrozenMap):
        return {key: encoded(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [encoded(item) for item in value]
    return value
