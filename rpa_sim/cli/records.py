"""The commands that write canonical records: ``generate`` (synthetic data) and ``import`` (a real format)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rpa_sim.cli.data import shows_progress
from rpa_sim.cli.options import (
    OUT_WORDS,
    out_argument,
    output_file,
    seed_argument,
    size,
    skip_invalid_argument,
    usage_error,
    workers_argument,
)
from rpa_sim.cli.output import say
from rpa_sim.common import limits
from rpa_sim.common.errors import UsageError
from rpa_sim.common.progress import stage, track

if TYPE_CHECKING:
    from rpa_sim.records.models import KIERecord, VQARecord

__all__ = ["COMMANDS", "add_parsers"]

_RECORDS_OUT = "the canonical records (.jsonl, gzip-compressed when it ends in .gz)"


def add_parsers(commands: Any) -> None:
    """The parsers of ``generate`` and ``import`` (one per format), added to ``commands``."""
    generate = commands.add_parser("generate", help="realistic synthetic data: receipts (KIE) or document questions")
    generate.add_argument("kind", choices=("receipts", "docvqa"), help="what to generate")
    # none is refused: a file of no records is no data set, and every command reading it would refuse it
    generate.add_argument("--n", type=size("records", most=limits.MOST_GENERATED_RECORDS, least=1,
                                           limited_by="a fixed ceiling for time",
                                           bytes_each=limits.GENERATE_BYTES_PER_RECORD), required=True,
                          metavar="N", help=f"how many documents (docvqa: questions), from 1 to "
                                            f"{limits.MOST_GENERATED_RECORDS:,} (required)")
    seed_argument(generate, what="the generator")
    out_argument(generate, what=_RECORDS_OUT)
    generate.add_argument("--settings", type=Path, metavar="FILE",
                          help="generator settings (error rates, confidence model, ...); see docs/generators.md "
                               "(default: the generator's defaults)")
    generate.add_argument("--signals", metavar="SPEC",
                          help="receipts: add confidence signals beside the confidence, a comma list of kinds "
                               "(degenerate, coarse, agreement, redundant, complementary), each as KIND or "
                               "NAME=KIND, or llm for all five; replaces the settings' signals (default: none; "
                               "docs/generators.md)")
    workers_argument(generate, default=min(os.cpu_count() or 1, 4),
                     what="generate, at most one per core and per block of records",
                     default_help="the cores, at most 4")

    importer = commands.add_parser("import", help="convert a real format into canonical records")
    formats = importer.add_subparsers(dest="format", required=True, metavar="FORMAT")
    kieval_csv = _import_format(formats, "kieval-csv", "the official KIEval CSV blocks (SRC/gt, SRC/pred)",
                                "folder with gt/ and pred/ CSV files", predictions=None)
    kieval_csv.add_argument("--shortlist", metavar="KEYS",
                            help="comma-separated keys to keep (the official shortlist) (default: all keys)")
    _skip_invalid_argument(kieval_csv)
    _skip_invalid_argument(_import_format(formats, "cord", "CORD v1/v2 receipts: ground truth and OCR (gt_parse, "
                                          "valid_line)", "a folder of CORD .json files, one .json file, or a .jsonl "
                                          "of v2 rows", predictions="a folder of model outputs (Qwen/KIEval JSON), "
                                          "matched by file name", predictions_metavar="DIR"))
    docile = _import_format(formats, "docile", "a DocILE dataset folder: key fields, line items and OCR",
                            "the dataset folder (annotations/, ocr/) or one of its split files",
                            predictions="canonical prediction records (.jsonl), joined on id")
    docile.add_argument("--segment", choices=("block", "line"), default="block",
                        help="which docTR unit bounds the spans used for grounding (default: block)")
    _skip_invalid_argument(docile)
    _lenient_arguments(_import_format(formats, "textract-expense", "AWS Textract AnalyzeExpense responses: "
                                      "predictions only", "a response .json file or a folder of them",
                                      predictions=None))
    _skip_invalid_argument(_import_format(formats, "dude", "DUDE questions: ground truth, and a submission's answers",
                                          "the DUDE ground-truth JSON",
                                          predictions="a DUDE submission (answers, answers_confidence)"))
    _service_arguments(_import_format(formats, "azure-di", "Azure Document Intelligence / Form Recognizer analyze "
                                      "results (v2.1, v3 and later)", "a result .json file or a folder of them",
                                      predictions=None), values=("text", "typed"))
    google = _import_format(formats, "google-docai", "Google Document AI Documents (entities, pages), a batch's "
                            "output", "a Document .json file, a folder of the shards of one, a folder of "
                            "Documents, or a batch's output folder (a folder of shards per document)",
                            predictions=None)
    _service_arguments(google, values=("mention", "normalized"))
    google.add_argument("--id", dest="document_id", metavar="ID",
                        help="the record's id, when SRC is one document (default: the file's stem, or the "
                             "folder's name)")
    _service_arguments(_import_format(formats, "mindee", "Mindee API responses (v1 predictions, v2 inferences)",
                                      "a response .json file or a folder of them", predictions=None), values=None)
    label_studio = _import_format(formats, "label-studio", "a Label Studio JSON export: annotations as ground "
                                  "truth, predictions with their scores", "the export: a JSON list of tasks, or one "
                                  "task, with the predictions' results (docs/importers/label-studio.md)",
                                  predictions=None)
    label_studio.add_argument("--id-from", default="id", metavar="FIELD",
                              help="the record id: id (the task's) or data.KEY, the file name without extension of "
                                   "the document the task's data.KEY references (default: id)")
    label_studio.add_argument("--review-log", type=output_file, metavar="FILE",
                              help=f"also the reviews as a production log for rpa-sim estimate, a review row per "
                                   f"predicted entity (JSON Lines, gzip-compressed when it ends in .gz), {OUT_WORDS} "
                                   f"(default: none)")
    _lenient_arguments(label_studio)
    mapping = _import_format(formats, "mapping", "any other JSON or JSON Lines output (an in-house service, an LLM "
                             "extractor), read as a mapping file says", "a .json, .jsonl or .jsonl.gz file, or a "
                             "folder of them", predictions=None)
    mapping.add_argument("--mapping", type=Path, required=True, metavar="FILE",
                         help="where the id, the fields, their keys, values, confidences and boxes are: paths such as "
                              "$.fields.* (docs/importers/mapping.md) (required)")
    mapping.add_argument("--review-log", type=output_file, metavar="FILE",
                         help=f"also the production log the mapping's log: section reads (route, check, day, segment "
                              f"columns) for rpa-sim estimate and watch, a row per imported predicted field (JSON "
                              f"Lines, gzip-compressed when it ends in .gz), {OUT_WORDS} (default: none)")
    _service_arguments(mapping, values=None)


def _skip_invalid_argument(parser: argparse.ArgumentParser) -> None:
    """``--skip-invalid`` of every importer (each reads many documents; docs/importers/service.md)."""
    skip_invalid_argument(parser, what="each file or document")


def _lenient_arguments(parser: argparse.ArgumentParser) -> None:
    """``--join-lines`` and ``--skip-invalid`` of the importers of service outputs (docs/importers/service.md)."""
    parser.add_argument("--join-lines", action="store_true",
                        help="write each line break in a value (a two-line address) as a space, as a ground truth "
                             "typed on one line has it (default: values as the service wrote them)")
    _skip_invalid_argument(parser)


def _service_arguments(parser: argparse.ArgumentParser, *, values: tuple[str, ...] | None) -> None:
    """The options that the importers of service outputs share (docs/importers/service.md)."""
    _lenient_arguments(parser)
    if values is not None:
        parser.add_argument("--value", choices=values, default=values[0],
                            help=f"which string is the value (default: {values[0]}; docs/importers)")
    parser.add_argument("--ground-truth", type=Path, metavar="FILE",
                        help="ground truth joined by document id: {id: {field: value}} JSON, one document's "
                             "{\"fields\": {...}}, or canonical records (.jsonl); writes full records (default: "
                             "none, predictions only)")
    parser.add_argument("--fields", type=Path, metavar="FILE",
                        help="YAML map of the service's field names to ground-truth keys (null drops a field) "
                             "(default: none, the service's names)")


def _import_format(formats: Any, name: str, summary: str, source: str, *, predictions: str | None,
                   predictions_metavar: str = "FILE") -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = formats.add_parser(name, help=summary)
    parser.add_argument("source", type=Path, metavar="SRC", help=source)
    out_argument(parser, what=_RECORDS_OUT)
    if predictions is not None:
        parser.add_argument("--predictions", type=Path, metavar=predictions_metavar,
                            help=f"{predictions} (default: none)")
    return parser


@shows_progress
def generate(args: argparse.Namespace) -> int:
    """``generate KIND --n N --out FILE``: synthetic records, the same bytes for the same seed."""
    from rpa_sim.common.files import check_output  # noqa: PLC0415
    from rpa_sim.common.yamlfile import read_yaml, validated  # noqa: PLC0415
    from rpa_sim.records.synthetic import DocVQASettings, ReceiptSettings, write_dataset  # noqa: PLC0415

    check_output(args.out)
    model: type[ReceiptSettings | DocVQASettings] = ReceiptSettings if args.kind == "receipts" else DocVQASettings
    settings = model() if args.settings is None else validated(model, read_yaml(args.settings) or {},
                                                               source=str(args.settings))
    if args.signals is not None:
        settings = _with_signals(args, settings)
    with stage(f"generating {args.kind}", total=args.n) as advance:
        written = write_dataset(args.kind, args.out, n=args.n, seed=args.seed, settings=settings,
                                workers=args.workers, progress=advance)
    say(f"wrote {written} {args.kind} records to {args.out}")
    return 0


def _with_signals(args: argparse.Namespace, settings: Any) -> Any:
    """The settings with ``--signals``' list in place of theirs; a usage error for questions or a bad SPEC."""
    from rpa_sim.records.synthetic.llm_signals import signal_specs  # noqa: PLC0415

    if args.kind != "receipts":
        raise usage_error("generate", "--signals applies to receipts only")
    try:
        return settings.model_copy(update={"signals": signal_specs(args.signals)})
    except ValueError as problem:
        raise usage_error("generate", f"argument --signals: {problem}") from None


@shows_progress
def import_records(args: argparse.Namespace) -> int:
    """``import FORMAT SRC --out FILE``: a real format's files as canonical records."""
    from rpa_sim.common.files import check_output  # noqa: PLC0415
    from rpa_sim.records.readers import write_records  # noqa: PLC0415

    check_output(args.out)
    records: Iterator[KIERecord] | Iterator[VQARecord]
    if args.format == "kieval-csv":
        from rpa_sim.records.importers.kieval_csv import import_kieval_csv  # noqa: PLC0415

        shortlist = None if args.shortlist is None else {k.strip() for k in args.shortlist.split(",") if k.strip()}
        records, report = import_kieval_csv(args.source, shortlist=shortlist, skip_invalid=args.skip_invalid)
    elif args.format == "cord":
        from rpa_sim.records.importers.cord import import_cord  # noqa: PLC0415

        records, report = import_cord(args.source, predictions=args.predictions, skip_invalid=args.skip_invalid)
    elif args.format == "docile":
        from rpa_sim.records.importers.docile import import_docile  # noqa: PLC0415

        records, report = import_docile(args.source, predictions=args.predictions, segment=args.segment,
                                        skip_invalid=args.skip_invalid)
    elif args.format == "textract-expense":
        from rpa_sim.records.importers.textract import import_textract_expense  # noqa: PLC0415

        records, report = import_textract_expense(args.source, skip_invalid=args.skip_invalid,
                                                  join_lines=args.join_lines)
    elif args.format == "label-studio":
        from rpa_sim.records.importers.label_studio import import_label_studio  # noqa: PLC0415

        if args.review_log is not None and args.review_log.resolve() == args.out.resolve():
            raise UsageError(f"--review-log {args.review_log} is --out {args.out}: give them different files")
        options = {"id_from": args.id_from, "skip_invalid": args.skip_invalid, "join_lines": args.join_lines}
        if args.review_log is None:
            records, report = import_label_studio(args.source, **options)
        else:  # the reviews graded with KIEval, a later stage than the records: composed here
            from rpa_sim.operate.monitoring.reviews import logged_reviews  # noqa: PLC0415
            from rpa_sim.records.importers.label_studio import read_label_studio  # noqa: PLC0415

            reviewed, report = read_label_studio(args.source, **options)
            records = logged_reviews(reviewed, args.review_log, report=report)
    elif args.format == "mapping":
        from rpa_sim.records.importers.mapping import import_mapping  # noqa: PLC0415

        if args.review_log is not None and args.review_log.resolve() == args.out.resolve():
            raise UsageError(f"--review-log {args.review_log} is --out {args.out}: give them different files")
        records, report = import_mapping(args.source, mapping=args.mapping, ground_truth=args.ground_truth,
                                         fields=args.fields, skip_invalid=args.skip_invalid,
                                         join_lines=args.join_lines, review_log=args.review_log)
    elif args.format == "dude":
        from rpa_sim.records.importers.dude import import_dude  # noqa: PLC0415

        records, report = import_dude(args.source, predictions=args.predictions, skip_invalid=args.skip_invalid)
    elif args.format == "azure-di":
        from rpa_sim.records.importers.azure_di import import_azure_di  # noqa: PLC0415

        records, report = import_azure_di(args.source, value=args.value, ground_truth=args.ground_truth,
                                          fields=args.fields, skip_invalid=args.skip_invalid,
                                          join_lines=args.join_lines)
    elif args.format == "google-docai":
        from rpa_sim.records.importers.google_docai import import_google_docai  # noqa: PLC0415

        records, report = import_google_docai(args.source, value=args.value, document_id=args.document_id,
                                              ground_truth=args.ground_truth, fields=args.fields,
                                              skip_invalid=args.skip_invalid, join_lines=args.join_lines)
    else:
        from rpa_sim.records.importers.mindee import import_mindee  # noqa: PLC0415

        records, report = import_mindee(args.source, ground_truth=args.ground_truth, fields=args.fields,
                                        skip_invalid=args.skip_invalid, join_lines=args.join_lines)
    written = write_records(track(records, "importing records"), args.out)
    say(f"wrote {written} records to {args.out}")
    for line in report.lines():
        say(line)
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"generate": generate, "import": import_records}
