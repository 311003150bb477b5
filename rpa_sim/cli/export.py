"""``export-policy``: a policy at a threshold in the form a review platform reads (docs/export.md)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rpa_sim.cli.data import evaluate_data, shows_progress
from rpa_sim.cli.options import (
    NAMES_HELP,
    SCENARIO_WORDS,
    data_arguments,
    out_argument,
    policy_argument,
    threshold_argument,
    usage_error,
)
from rpa_sim.cli.output import say
from rpa_sim.common.errors import InputError
from rpa_sim.common.progress import stage

if TYPE_CHECKING:
    from rpa_sim.route.policies import Policy
    from rpa_sim.study.result import StudySummary

__all__ = ["COMMANDS", "add_parsers"]


def add_parsers(commands: Any) -> None:
    """The parser of ``export-policy`` and its formats, added to ``commands``."""
    from rpa_sim.route.export import FORMATS  # noqa: PLC0415

    export = commands.add_parser("export-policy", help="a policy at a threshold in the form a review platform reads: "
                                                       "Amazon A2I, Rossum, Label Studio tasks, plain thresholds "
                                                       "(docs/export.md)")
    formats = export.add_subparsers(dest="format", required=True, metavar="FORMAT")
    about = {"a2i": "Amazon A2I human loop activation conditions for Textract AnalyzeDocument (JSON)",
             "rossum": "Rossum score thresholds: a queue's default and its schema datapoints' (JSON)",
             "label-studio": "the values a policy routes to review on DATA, as Label Studio tasks (JSON)",
             "thresholds": "plain thresholds per field and document type, YAML or JSON by --out's suffix"}
    for name in FORMATS:
        parser = formats.add_parser(name, help=about[name], epilog=NAMES_HELP)
        if name == "label-studio":
            data_arguments(parser)
        else:
            data_arguments(parser, option="the fields to state: every field of DATA, and no other")
        source = parser.add_mutually_exclusive_group(required=True)
        policy_argument(source, when="with --threshold; default: none, this or --from is required")
        source.add_argument("--from", dest="from_summary", type=Path, metavar="FILE",
                            help="a study's summary.json (rpa-sim run --out-dir): its decision's policy and threshold "
                                 "(default: none; this or --policy is required)")
        threshold_argument(parser, required=False, goes_with="--policy")
        parser.add_argument("--allow-infeasible", action="store_true",
                            help="with --from a summary whose decision meets not every constraint: export its nearest "
                                 "point all the same, marked infeasible in the file where the format has room "
                                 "(default: refused)")
        parser.add_argument("--scenario", metavar="SCENARIO",
                            help=f"{SCENARIO_WORDS}, the one the study ran, with --from a summary written before "
                                 f"rpa-sim kept the policy's rules in it (schema version 2 or 1): its policies: hold "
                                 f"the decision's policy by name; with a newer summary it must hold the same rules "
                                 f"(default: none)")
        out_argument(parser, what="the platform's file")
        if name == "label-studio":
            parser.add_argument("--document-url", default="{id}", metavar="TEMPLATE",
                                help="each task's data.image, {id} replaced by the record id (default: {id})")
            parser.add_argument("--model-version", metavar="NAME",
                                help="the predictions' model_version (default: DATA's file name)")
            continue
        parser.add_argument("--field", action="append", default=[], metavar="KEY",
                            help="a field to state, under its rpa-sim key (repeat for several) (default: DATA's "
                                 "fields, else those the policy names)")
        parser.add_argument("--fields", type=Path, metavar="FILE",
                            help="YAML map of the platform's field names to rpa-sim keys, as import reads it (null "
                                 "drops a name); a key's further names are its aliases (default: none)")
        parser.add_argument("--document-type", metavar="TYPE",
                            help="the thresholds of this document type (default: the policy-wide ones)")
        if name == "a2i":
            parser.add_argument("--textract-confidence", choices=("key-value", "word"), default="key-value",
                                help="the Textract confidence the policy's confidence stands for: the key-value "
                                     "pair's or its words' (default: key-value)")


@shows_progress
def export_policy(args: argparse.Namespace) -> int:
    """``export-policy FORMAT``: a policy at a threshold in the form a review platform reads."""
    from rpa_sim.common.files import atomic_write_text, check_output  # noqa: PLC0415
    from rpa_sim.route.export.rules import exported_fields, policy_at  # noqa: PLC0415

    check_output(args.out)
    rules = args.format != "label-studio"
    command = f"export-policy {args.format}"
    if args.policy is not None and args.threshold is None:
        raise usage_error(command, "--policy needs --threshold T (or give --from FILE, a summary.json)")
    if args.threshold is not None and args.policy is None:
        raise usage_error(command, "--threshold goes with --policy (a decision brings its own threshold)")
    if args.scenario is not None and args.from_summary is None:
        raise usage_error(command, "--scenario goes with --from")
    if args.allow_infeasible and args.from_summary is None:
        raise usage_error(command, "--allow-infeasible goes with --from")
    if args.data is None and (args.predictions is not None or args.task is not None or args.skip_invalid):
        raise usage_error(command, "--predictions, --task and --skip-invalid go with --data")
    infeasible: str | None = None  # why the decision exported is not feasible, said once the export is written
    if args.from_summary is not None:
        from rpa_sim.study.result import read_summary  # noqa: PLC0415

        where = str(args.from_summary)
        summary = read_summary(args.from_summary)
        decision = summary.decision
        if decision is None:
            raise InputError("holds no decision (it was written before rpa-sim decided): give --policy and "
                             "--threshold", path=where)
        if decision.policy is None or decision.threshold is None:
            raise InputError(f"its decision chose no policy ({decision.reason}): give --policy and --threshold",
                             path=where)
        _check_decided_threshold(decision.threshold, where)
        policy = decision.rules if args.scenario is None else _scenario_policy(args.scenario, summary, where)
        if policy is None:
            raise InputError("holds the decided policy's name but not its rules (it was written before rpa-sim "
                             "kept them, schema version 2 or 1): give --scenario SCENARIO, the scenario the study "
                             "ran", path=where)
        infeasible = None if decision.feasible else decision.reason or "no point meets every constraint"
        if infeasible is not None and not args.allow_infeasible:
            raise InputError(f"its decision is not feasible, no plan meets the constraints ({infeasible}): give "
                             "--allow-infeasible to export its nearest point all the same", path=where)
        at = replace(policy_at(policy, decision.threshold, source=f"the decision of {where}"), infeasible=infeasible)
    else:
        from rpa_sim.route.policies import load_policy  # noqa: PLC0415

        at = policy_at(load_policy(args.policy), args.threshold, source="--threshold")
    table = None
    if args.data is not None:
        table = evaluate_data(args, policies=[at.policy])
    with stage(f"exporting {args.format}"):
        if table is not None and not rules:  # label-studio's parser requires DATA: its tasks are DATA's values
            from rpa_sim.route.export.label_studio import export_label_studio  # noqa: PLC0415

            export = export_label_studio(at, table, document_url=args.document_url,
                                         model_version=args.model_version or args.data.name.split(".")[0])
        else:
            field_map = None
            if args.fields is not None:
                from rpa_sim.records.importers.service import FieldMap  # noqa: PLC0415

                field_map = FieldMap.load(args.fields).names
            if table is not None:  # the policy must fit the data, as a sweep on it would check
                from rpa_sim.route.sweep import Sweeper  # noqa: PLC0415

                Sweeper(table, at.policy)
                if args.document_type is not None and args.document_type not in table.document_types:
                    raise InputError(f"--document-type {args.document_type!r}: no record of {args.data} is of it "
                                     f"(document types: {', '.join(repr(n) for n in table.document_types if n)})")
            fields = exported_fields(at, fields=args.field, field_map=field_map, map_source=str(args.fields),
                                     known=None if table is None else [name for name in table.field_names if name])
            if args.format == "a2i":
                from rpa_sim.route.export.a2i import export_a2i  # noqa: PLC0415

                export = export_a2i(at, fields, every_field=table is not None or bool(args.field or args.fields),
                                    document_type=args.document_type, confidence=args.textract_confidence)
            elif args.format == "rossum":
                from rpa_sim.route.export.rossum import export_rossum  # noqa: PLC0415

                export = export_rossum(at, fields, document_type=args.document_type)
            else:
                from rpa_sim.route.export.thresholds import export_thresholds  # noqa: PLC0415

                export = export_thresholds(at, fields, out=args.out, document_type=args.document_type)
    if infeasible is not None:
        room = "" if args.format != "a2i" else " (a2i has no room to mark it: keep this note with the file)"
        say(f"note: the decision of {args.from_summary} is not feasible: {infeasible}{room}")
    if args.threshold is not None and args.threshold > 1:  # a percentage typed for a score, as likely as not
        say(f"note: --threshold {args.threshold:g} is above 1: every value the policy covers is reviewed (scores "
            f"are in [0, 1], not percentages)")
    for note in export.notes:
        say(f"note: {note}")
    atomic_write_text(args.out, export.text)
    say(f"wrote {args.out}: {export.summary}")
    return 0


def _scenario_policy(named: str, summary: StudySummary, where: str) -> Policy:
    """The decided policy as the scenario ``named`` (``--scenario``) defines it: the scenario must be the one
    the study ran, and, when the summary holds the policy's rules, define the same rules (the study's τ was
    found for those; a policy edited since is refused rather than exported at a τ found for another)."""
    from rpa_sim.study.run import scenario_policies  # noqa: PLC0415
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    decision = summary.decision
    assert decision is not None and decision.policy is not None, "a decision with a policy"
    scenario, base = load_scenario(named)
    if scenario.name != summary.scenario:
        raise InputError(f"is the result of scenario {summary.scenario!r}, and --scenario {named} is scenario "
                         f"{scenario.name!r}", path=where)
    policies = {policy.name: policy for policy in scenario_policies(scenario, base)}
    if decision.policy not in policies:
        raise InputError(f"its decision's policy {decision.policy!r} is not among the policies of scenario "
                         f"{scenario.name!r} ({', '.join(policies)})", path=where)
    policy = policies[decision.policy]
    if decision.rules is not None and decision.rules != policy:
        raise InputError(f"holds the rules of policy {decision.policy!r} as the study ran it, and --scenario "
                         f"{named} defines that policy otherwise now: leave out --scenario to export the rules the "
                         f"study ran", path=where)
    return policy


def _check_decided_threshold(threshold: float, where: str) -> None:
    """Refuse a decision's τ that no study decides: a study sweeps thresholds in [0, 1], up to the point one step
    above 1 where an exact grid ends (reviewing everything the policy routes), though ``--threshold`` takes any
    number >= 0. A summary.json edited or damaged into a negative or infinite τ would export rules that review
    nothing (A2I ``LessThan -50``)."""
    import math  # noqa: PLC0415

    from rpa_sim.common.errors import shown  # noqa: PLC0415

    if not (math.isfinite(threshold) and 0.0 <= threshold <= math.nextafter(1.0, 2.0)):
        raise InputError(f"its decision's threshold {shown(threshold)} is not in [0, 1], where a study decides "
                         f"one: the file was edited or damaged; run the study again, or give --policy and "
                         f"--threshold", path=where, field="decision.threshold")


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"export-policy": export_policy}
