"""The ``rpa-sim`` command line.

Every command reads the results of the two stages (evaluate, then route and
sweep) and only formats them. Bad input ends with ``rpa-sim: error: ...`` on
standard error and exit status 1; usage errors exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from rpa_sim import __version__
from rpa_sim.errors import InputError
from rpa_sim.importers.kieval_csv import import_kieval_csv
from rpa_sim.outcomes import KIEOutcomes, VQAOutcomes, evaluate_kie, evaluate_vqa
from rpa_sim.readers import read_records, write_records
from rpa_sim.synthetic import synthetic_receipts

__all__ = ["main"]

DEMO_DOCUMENTS = 200
DEMO_SEED = 2024


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rpa-sim",
        description="Replay document-AI predictions through human-review policies.",
    )
    parser.add_argument("--version", action="version", version=f"rpa-sim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="score a small generated receipts set (the bundled default)")
    demo.add_argument("--json", action="store_true", help="print the figures as JSON")

    score = commands.add_parser("score", help="corpus metrics of the predictions as they are")
    score.add_argument("data", type=Path, metavar="DATA", help="records (.jsonl or .jsonl.gz)")
    score.add_argument("--predictions", type=Path, metavar="FILE",
                       help="predictions joined to DATA on id (DATA then holds the ground truth)")
    score.add_argument("--task", choices=("kie", "vqa"), help="default: inferred from the records")
    score.add_argument("--json", action="store_true", help="print the figures as JSON")
    score.add_argument("--skip-invalid", action="store_true",
                       help="skip records that do not fit the format and report them, instead of stopping")
    score.add_argument("--value-match", choices=("exact", "normalized"), default="exact",
                       help="KIE: compare values exactly (the official KIEval) or with case and spaces folded")
    score.add_argument("--alpha", type=float, default=0.25, help="VQA: SMuDGE's weight of the match score")

    importer = commands.add_parser("import", help="convert a real format into canonical records")
    formats = importer.add_subparsers(dest="format", required=True, metavar="FORMAT")
    kieval_csv = formats.add_parser("kieval-csv", help="the official KIEval CSV blocks (SRC/gt, SRC/pred)")
    kieval_csv.add_argument("source", type=Path, metavar="SRC", help="folder with gt/ and pred/ CSV files")
    kieval_csv.add_argument("--out", type=Path, required=True, metavar="FILE", help="canonical .jsonl(.gz) output")
    kieval_csv.add_argument("--shortlist", metavar="KEYS",
                            help="comma-separated keys to keep (the official shortlist); default: all keys")
    return parser


def _number(value: float | int | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.4f}"


def _table(rows: Sequence[tuple[str, float | int | None]]) -> str:
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"  {name:<{width}}  {_number(value):>10}" for name, value in rows)


def _kie_report(table: KIEOutcomes) -> str:
    c = table.counts
    rows = [
        ("documents", c.documents), ("entities (ground truth)", c.entities_gt),
        ("entities (predicted)", c.entities_pred), ("correct (TP)", c.tp),
        ("substitutions", c.substitutions), ("additions", c.additions), ("deletions", c.deletions),
        ("KIEval entity F1", c.entity_f1), ("KIEval group F1", c.group_f1),
        ("KIEval_Aligned", c.kieval_aligned), ("group-level aligned", c.group_aligned),
        ("entity F1, grouping-blind", c.grouping_blind_entity_f1),
    ]
    if c.ignored_empty:
        rows.append(("ignored (empty value)", c.ignored_empty))
    return f"KIE, values compared {table.value_match}ly\n" + _table(rows)


def _vqa_report(table: VQAOutcomes) -> str:
    s = table.summary()
    rows = [("questions", s["questions"]), ("ANLS", s["anls"]), ("accuracy", s["accuracy"]),
            (f"SMuDGE (alpha {table.alpha:g})", s["smudge"]), ("match", s["match"]),
            ("grounding", s["grounding"]), ("evidence IoU", s["evidence_iou"]),
            ("absolute deviation", s["absolute_deviation"])]
    return "Document VQA\n" + _table(rows)


def _print_json(payload: dict) -> None:
    print(json.dumps(payload, indent=2, allow_nan=False))


def _score(args: argparse.Namespace) -> int:
    stream = read_records(args.data, predictions=args.predictions, task=args.task, skip_invalid=args.skip_invalid)
    if stream.task == "kie":
        table = evaluate_kie(stream, value_match=args.value_match)
        payload = {**table.counts.to_dict(), "value_match": table.value_match}
        text = _kie_report(table)
    else:
        table = evaluate_vqa(stream, alpha=args.alpha)
        payload = table.summary()
        text = _vqa_report(table)
    if stream.skipped:
        print(f"rpa-sim: {stream.skipped_summary()}", file=sys.stderr)
        for error in stream.skipped[:20]:
            print(f"  {error}", file=sys.stderr)
        if len(stream.skipped) > 20:
            print(f"  ... and {len(stream.skipped) - 20} more", file=sys.stderr)
    if args.json:
        _print_json({**payload, "skipped": len(stream.skipped)})
    else:
        print(text)
    return 0


def _import_kieval_csv(args: argparse.Namespace) -> int:
    shortlist = None if args.shortlist is None else {k.strip() for k in args.shortlist.split(",") if k.strip()}
    records, report = import_kieval_csv(args.source, shortlist=shortlist)
    written = write_records(records, args.out)
    print(f"wrote {written} documents to {args.out}")
    print("note: the KIEval CSV format has no confidences; every prediction has confidence 1.0")
    if report.missing_prediction:
        print(f"note: {len(report.missing_prediction)} documents have no prediction file "
              f"(scored as predicting nothing): {', '.join(report.missing_prediction[:10])}")
    if report.dropped_keys:
        print(f"note: {report.dropped_keys} values dropped: their keys are not in the shortlist")
    return 0


def _demo(args: argparse.Namespace) -> int:
    table = evaluate_kie(synthetic_receipts(DEMO_DOCUMENTS, seed=DEMO_SEED))
    if args.json:
        _print_json({**table.counts.to_dict(), "value_match": table.value_match})
        return 0
    print(f"rpa-sim demo: {DEMO_DOCUMENTS} generated CORD-like receipts (seed {DEMO_SEED}), scored as predicted.")
    print("(This is a small generated set; the bundled demo scenario with review policies comes later.)\n")
    print(_kie_report(table))
    return 0


_COMMANDS = {"demo": _demo, "score": _score}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "import":
            return _import_kieval_csv(args)
        return _COMMANDS[args.command](args)
    except InputError as error:
        print(f"rpa-sim: error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader of our output went away (e.g. `| head`): not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
