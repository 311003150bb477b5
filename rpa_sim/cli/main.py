"""The ``rpa-sim`` command line.

Every command reads the results of the two stages (evaluate, then route and
sweep) and only formats them. The conventions (``docs/cli.md``): results go to
standard output, messages ("wrote ...", skipped records, progress bars) to
standard error; tabular results come as ``--format table|csv|json``;
``--out`` is always a file and ``--out-dir`` a folder. A user's mistake ends
in one line ``rpa-sim: error: ...`` on standard error, with exit status 1 for
bad input and 2 for bad usage; Ctrl-C exits with 130 and SIGTERM with 143,
leaving no partial output behind.

The parser is built from the standard library alone: each command imports
what it needs, so ``rpa-sim --help`` starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from rpa_sim import __version__
from rpa_sim.cli.data import evaluate_data, evaluate_each_shard, shows_progress
from rpa_sim.cli.output import MESSAGE_LIMIT, one_line
from rpa_sim.common import limits
from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.common.progress import stage, track
from rpa_sim.common.workers import available_cores

if TYPE_CHECKING:
    from rpa_sim.bundled import Kind
    from rpa_sim.evaluate.outcomes import OutcomeTable
    from rpa_sim.route.sweep import Curve
    from rpa_sim.study.run import ScenarioResult

__all__ = ["MESSAGE_LIMIT", "UsageError", "main"]

DEMO_SCENARIO = "receipts-demo"
NAMES_HELP = ("Policies (--policy, a scenario's policies:) and scenarios (SCENARIO) are bundled names or paths. A bare "
              "name such as confidence or receipts-demo is always the file bundled with rpa-sim, even if a file of "
              "that name is in the current folder; anything with a path separator or a .yaml/.yml suffix "
              "(./confidence, rules/strict, my-policy.yaml) is a file on disk. Paths in a scenario's policies: start "
              "from the scenario's folder. An unknown name is an error that lists the bundled names.")
FORMATS = ("table", "csv", "json")
EXIT_INPUT, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 128 + signal.SIGINT, 128 + signal.SIGTERM

# Sweep columns that count things: expectations under an imperfect reviewer, printed as integers when whole.
_COUNT_COLUMNS = frozenset({"reviewed", "rejected", "documents_straight_through", "residual_substitutions",
                            "residual_deletions", "additions"})


class _Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt so that every cleanup on the way out runs."""


# --------------------------------------------------------------------------- the parser


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line: ``rpa-sim: error: COMMAND: problem (see ...)``."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("rpa-sim").strip()
        where = f"{command}: " if command else ""
        self.exit(EXIT_USAGE, one_line(f"rpa-sim: error: {where}{message} (see '{self.prog} --help')") + "\n")

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # argparse before Python 3.12 drops the value '--' of --out=-- as if it ended the options, and hands the
        # action an empty list, neither converted nor checked: a traceback later; '--' is taken as written
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value
        return super()._get_values(action, arg_strings)


class _DeprecatedAlias(argparse.Action):
    """An old spelling of an option, kept for one release: it works, says so on stderr, and is hidden from help.

    The warning waits in the namespace (``deprecations``) until the command has done its work: a command line
    that fails, at parsing or later, ends in its one error line alone.
    """

    def __init__(self, option_strings: list[str], dest: str, *, replacement: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.replacement = replacement

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        warning = (f"{option_string} is deprecated and will be removed in the next release; "
                   f"use {self.replacement}")
        namespace.deprecations = [*getattr(namespace, "deprecations", []), warning]
        setattr(namespace, self.dest, values)


def _bounded(kind: type[int] | type[float], *, low: float, high: float | None = None,
             open_low: bool = False, open_high: bool = False) -> Callable[[str], Any]:
    """An argparse type: a finite number of ``kind`` within the bounds, or a usage error quoting the text."""
    if kind is int:
        wanted = f"an integer >= {low:g}"
    elif high is None:
        wanted = f"a number {'>' if open_low else '>='} {low:g}"
    else:
        wanted = f"a number in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = math.nan
        above_low = value > low if open_low else value >= low
        below_high = high is None or (value < high if open_high else value <= high)
        if not (math.isfinite(value) and above_low and below_high):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value

    return parse


_SHARE = _bounded(float, low=0.0, high=1.0)
_OPEN_SHARE = _bounded(float, low=0.0, high=1.0, open_low=True, open_high=True)
_NON_NEGATIVE = _bounded(int, low=0)
_POSITIVE = _bounded(int, low=1)


def _size(unit: str, *, most: int, limited_by: str, bytes_each: float | None = None,
          least: int = 0) -> Callable[[str], int]:
    """An argparse type: a whole number of ``unit`` (``1e6`` too) within :func:`rpa_sim.common.limits.check_size`'s range."""
    def parse(text: str) -> int:
        try:
            value = limits.check_size(text, unit=unit, most=most, limited_by=limited_by, bytes_each=bytes_each,
                                      least=least)
        except limits.SizeError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        if not isinstance(value, int):
            raise argparse.ArgumentTypeError(f"expected a whole number of {unit}, got {text!r}")
        return value

    return parse


def _simulated_hours(text: str) -> float:
    hours = _bounded(float, low=0.0, open_low=True)(text)
    if hours > limits.MOST_SIMULATED_HOURS:
        raise argparse.ArgumentTypeError(f"{text} hours is more than the {limits.MOST_SIMULATED_HOURS:,} allowed "
                                         f"(a year, as a scenario's operations: days)")
    return hours


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rpa-sim", description="Replay document-AI predictions through human-review policies.",
                     epilog=NAMES_HELP)
    parser.add_argument("--version", action="version", version=f"rpa-sim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help=f"the bundled scenario ({DEMO_SCENARIO}): the dashboard in a terminal, "
                                             "else its comparison as text")
    shown = _format_arguments(demo, what="the comparison", default=None,
                              default_help="the dashboard in a terminal, else table")
    shown.add_argument("--text", action="store_const", const="table", dest="format",
                       help="same as --format table: the comparison as a table even in a terminal")

    dashboard = commands.add_parser("dashboard", help="the interactive dashboard (Textual) on a scenario or records",
                                    epilog=NAMES_HELP)
    dashboard.add_argument("source", nargs="?", metavar="SCENARIO|DATA",
                           help=f"a scenario (name or YAML), a records file or an outcome table (.parquet) "
                                f"(default: {DEMO_SCENARIO})")
    _folder_argument(dashboard, "--out-dir", "--export-dir",
                     help="the folder the dashboard writes exports and screenshots into, created when needed "
                          "(default: the current folder)")

    evaluate = commands.add_parser("evaluate", help="evaluate records once into an outcome table file (Parquet) "
                                                    "that every command taking DATA reads")
    _data_arguments(evaluate, tables=False)
    evaluate.add_argument("--out", required=True, metavar="FILE|DIR/",
                          help="the outcome table to write (Parquet, atomically; name it .parquet); missing folders "
                               "are created; a folder (a name ending with /) gets a table per shard of DATA, "
                               "part-00000.parquet, ..., which every command reads back as DATA (required)")

    score = commands.add_parser("score", help="corpus metrics of the predictions as they are")
    _data_arguments(score)
    _format_arguments(score, what="the figures")

    sweep = commands.add_parser("sweep", help="trade-off curves, one row per policy and threshold",
                                epilog=NAMES_HELP)
    _data_arguments(sweep)
    sweep.add_argument("--policy", action="append", required=True, metavar="P",
                       help="a policy file or bundled policy name (repeat for several; required)")
    sweep.add_argument("--thresholds", default="exact", metavar="SPEC",
                       help="exact (every distinct threshold), linspace:START:STOP:NUM (at most 1,000,000 points), "
                            "or a comma list of numbers (default: exact)")
    _format_arguments(sweep, what="the rows")
    sweep.add_argument("--out", type=Path, metavar="FILE",
                       help="write to FILE (atomically; missing folders are created) instead of printing "
                            "(default: print)")
    sweep.add_argument("--miss-rate", type=_SHARE, default=0.0, metavar="RATE",
                       help="share of reviewed errors the reviewer misses, in [0, 1] (default: 0)")
    sweep.add_argument("--false-correction-rate", type=_SHARE, default=0.0, metavar="RATE",
                       help="share of reviewed correct values the reviewer breaks, in [0, 1] (default: 0)")
    sweep.add_argument("--replicates", type=_size("replicates", most=limits.MOST_REPLICATES,
                                                  limited_by="a fixed ceiling: each replicate draws every item"),
                       default=0, metavar="N",
                       help=f"add Monte Carlo spread columns from N seeded replays (audits, misses, false "
                            f"corrections), at most {limits.MOST_REPLICATES:,}; 0 = none (default: 0)")
    sweep.add_argument("--seed", type=_NON_NEGATIVE, default=0, metavar="S",
                       help="seed of the Monte Carlo replays, an integer >= 0 (default: 0)")

    certify = commands.add_parser("certify", help="the most permissive threshold with a guaranteed error rate")
    _data_arguments(certify)
    certify.add_argument("--max-error", type=_OPEN_SHARE, required=True, metavar="EPS",
                         help="largest acceptable error rate of auto-accepted predictions, a share in (0, 1) "
                              "(required)")
    certify.add_argument("--delta", type=_OPEN_SHARE, required=True, metavar="D",
                         help="allowed probability that the guarantee fails, in (0, 1) (required)")
    certify.add_argument("--calibration-fraction", type=_bounded(float, low=0.0, high=1.0, open_low=True),
                         default=0.5, metavar="F",
                         help="share of documents used to certify, in (0, 1]; the rest checks it (default: 0.5)")
    certify.add_argument("--seed", type=_NON_NEGATIVE, default=0, metavar="S",
                         help="seed of the calibration split, an integer >= 0 (default: 0)")
    certify.add_argument("--by", choices=("document_type", "field"), default=None,
                         help="certify a threshold for each document type (the records' document_type) or each "
                              "field (KIE key, VQA question type) on its own (default: one for all)")
    _format_arguments(certify, what="the result (table: the guarantee in words)")

    run = commands.add_parser("run", help="everything a scenario asks for: curves, comparison, costs",
                              epilog=NAMES_HELP)
    run.add_argument("scenario", metavar="SCENARIO", help="a scenario YAML file or bundled scenario name")
    _folder_argument(run, "--out-dir", "--out",
                     help="also write curves.csv and summary.json into this folder, created when needed "
                          "(default: write nothing)")
    _format_arguments(run, what="the comparison (json: the whole summary)")
    _scheduler_argument(run, scenario=True)

    report = commands.add_parser("report", help="a self-contained HTML report of a scenario, with its plots",
                                 epilog=NAMES_HELP)
    report.add_argument("scenario", metavar="SCENARIO", help="a scenario YAML file or bundled scenario name")
    report.add_argument("--out", type=Path, required=True, metavar="FILE",
                        help="the HTML file to write; missing folders are created (required)")
    _folder_argument(report, "--png-dir", "--png",
                     help="also write each plot as a PNG file into this folder, created when needed "
                          "(default: no PNG)")
    _scheduler_argument(report, scenario=True)

    generate = commands.add_parser("generate", help="realistic synthetic data: receipts (KIE) or document questions")
    generate.add_argument("kind", choices=("receipts", "docvqa"), help="what to generate")
    generate.add_argument("--n", type=_size("records", most=limits.MOST_GENERATED_RECORDS,
                                            limited_by="a fixed ceiling for time",
                                            bytes_each=limits.GENERATE_BYTES_PER_RECORD), required=True,
                          metavar="N", help=f"how many documents (docvqa: questions), at most "
                                            f"{limits.MOST_GENERATED_RECORDS:,} (required)")
    generate.add_argument("--seed", type=_NON_NEGATIVE, required=True, metavar="S",
                          help="an integer >= 0; the same seed gives the same bytes (required)")
    generate.add_argument("--out", type=Path, required=True, metavar="FILE",
                          help="canonical .jsonl output, gzip-compressed when it ends in .gz; missing folders are "
                               "created (required)")
    generate.add_argument("--settings", type=Path, metavar="YAML",
                          help="generator settings (error rates, confidence model, ...); see docs/generators.md "
                               "(default: the generator's defaults)")
    generate.add_argument("--workers", type=_POSITIVE, default=min(os.cpu_count() or 1, 4), metavar="W",
                          help="processes that generate, at most one per core and per block of records (a larger "
                               "W is capped); the output is the same for any number (default: the cores, at most 4)")

    staff = commands.add_parser("staff", help="reviewers a review queue needs, or how a team copes: Erlang C/A "
                                              "or a simulation (docs/operations.md)")
    positive_number = _bounded(float, low=0.0, open_low=True)
    staff.add_argument("scenario", nargs="?", metavar="SCENARIO",
                       help="a scenario with an operations: section (file or bundled name): the reviewers each "
                            "policy needs per hour at its operating points, instead of the queue flags below")
    staff.add_argument("--arrivals-per-hour", type=positive_number, metavar="R",
                       help="tasks arriving per hour, at random (a Poisson stream), > 0 (default: none; required "
                            "without SCENARIO)")
    staff.add_argument("--handle-seconds", type=positive_number, metavar="S",
                       help="mean time a reviewer takes per task, in seconds (exponential), > 0 (default: none; "
                            "required without SCENARIO)")
    team = staff.add_mutually_exclusive_group()
    team.add_argument("--reviewers", type=_POSITIVE, metavar="C",
                      help="the figures of C reviewers on the floor (default: none; without SCENARIO, this or "
                           "--service-level is required)")
    team.add_argument("--service-level", type=_OPEN_SHARE, metavar="L",
                      help="the fewest reviewers who answer a share L in (0, 1) of all tasks within --answer-within "
                           "(default: none; without SCENARIO, this or --reviewers is required)")
    staff.add_argument("--answer-within", type=_bounded(float, low=0.0), metavar="T",
                       help="the service level's target: seconds from arrival to the start of review (default: "
                            "none; required without SCENARIO)")
    staff.add_argument("--patience", type=positive_number, metavar="P",
                       help="mean patience of a waiting task, in seconds (exponential): a task waiting longer leaves "
                            "unreviewed; Erlang A (default: none, Erlang C)")
    staff.add_argument("--simulate", action="store_true",
                       help="simulate the queue (one run, same assumptions) instead of the exact formulas; with "
                            "--service-level, the team the formulas size (default: the exact formulas)")
    staff.add_argument("--hours", type=_simulated_hours, metavar="H",
                       help=f"with --simulate: hours simulated, > 0 and at most {limits.MOST_SIMULATED_HOURS:,} "
                            f"(a year) (default: 168)")
    staff.add_argument("--seed", type=_NON_NEGATIVE, metavar="N",
                       help="with --simulate: seed, an integer >= 0; the same seed gives the same bytes (default: 0)")
    _format_arguments(staff, what="the figures")

    replay = commands.add_parser("replay", help="one production day of a policy at a threshold: a log of routes, "
                                                "audits and what people found (docs/monitoring.md)",
                                 epilog=NAMES_HELP)
    _data_arguments(replay)
    _monitored_policy_arguments(replay)
    audit = replay.add_mutually_exclusive_group()
    audit.add_argument("--audit-rate", type=_SHARE, metavar="A",
                       help="share of auto-accepted items drawn at random for a careful check, in [0, 1] "
                            "(default: the policy's audit share)")
    audit.add_argument("--audit-plan", type=Path, metavar="FILE",
                       help="per-stratum audit rates, a YAML file as plan-audit writes it (default: none)")
    replay.add_argument("--miss-rate", type=_SHARE, default=0.0, metavar="RATE",
                        help="share of reviewed errors the reviewer misses, in [0, 1] (default: 0)")
    replay.add_argument("--false-correction-rate", type=_SHARE, default=0.0, metavar="RATE",
                        help="share of reviewed correct values the reviewer breaks, in [0, 1] (default: 0)")
    replay.add_argument("--seed", type=_NON_NEGATIVE, required=True, metavar="S",
                        help="an integer >= 0; the same seed gives the same bytes (required)")
    replay.add_argument("--log", type=Path, required=True, metavar="FILE",
                        help="the log to write: JSON Lines, gzip-compressed when it ends in .gz, written atomically; "
                             "missing folders are created (required)")

    estimate = commands.add_parser("estimate", help="the error rate of auto-accepted items and the post-correction "
                                                    "quality, with intervals, from a production log")
    estimate.add_argument("log", type=Path, metavar="LOG",
                          help="a production log (JSON Lines, .gz too): rpa-sim replay's, or a team's export in the "
                               "format of docs/monitoring.md")
    estimate.add_argument("--method", choices=("classical", "stratified", "ppi"), required=True,
                          help="classical (one audit rate; exact), stratified (a rate per stratum; exact per stratum, "
                               "Bonferroni) or ppi (PPI++, the confidences as the proxy) (required)")
    _confidence_level_argument(estimate)
    _format_arguments(estimate, what="the estimate")

    plan = commands.add_parser("plan-audit", help="how many auto-accepted items to audit, per confidence band "
                                                  "(Neyman allocation)", epilog=NAMES_HELP)
    _data_arguments(plan)
    _monitored_policy_arguments(plan)
    size = plan.add_mutually_exclusive_group(required=True)
    size.add_argument("--target-width", type=_bounded(float, low=0.0, high=1.0, open_low=True), metavar="W",
                      help="the widest interval wanted, in (0, 1]: the fewest audits whose normal-theory width at "
                           "the confidences' prior error rates is at most W (default: none; this or --budget is "
                           "required)")
    size.add_argument("--budget", type=_POSITIVE, metavar="N",
                      help="the audits to spread, an integer >= 1 (default: none; this or --target-width is "
                           "required)")
    _confidence_level_argument(plan)
    plan.add_argument("--bands", type=_size("bands", most=limits.MOST_BANDS, least=1, limited_by="a fixed ceiling",
                                            bytes_each=limits.BAND_BYTES), default=4, metavar="K",
                      help="the most confidence bands, of about equal size (fewer with tied confidences, and at most "
                           "--budget) (default: 4)")
    plan.add_argument("--cost-per-audit", type=_bounded(float, low=0.0, high=math.inf, open_high=True), metavar="C",
                      help="what one audit costs, a number >= 0: gives the plan a cost (default: none)")
    plan.add_argument("--out", type=Path, metavar="FILE",
                      help="write the plan (YAML, atomically) for replay --audit-plan; missing folders are created "
                           "(default: write nothing)")
    _format_arguments(plan, what="the plan (csv: one row per band)")

    _export_policy_arguments(commands)

    importer = commands.add_parser("import", help="convert a real format into canonical records")
    formats = importer.add_subparsers(dest="format", required=True, metavar="FORMAT")
    kieval_csv = _import_format(formats, "kieval-csv", "the official KIEval CSV blocks (SRC/gt, SRC/pred)",
                                "folder with gt/ and pred/ CSV files", predictions=None)
    kieval_csv.add_argument("--shortlist", metavar="KEYS",
                            help="comma-separated keys to keep (the official shortlist) (default: all keys)")
    _import_format(formats, "cord", "CORD v1/v2 receipts: ground truth and OCR (gt_parse, valid_line)",
                   "a folder of CORD .json files, one .json file, or a .jsonl of v2 rows",
                   predictions="a folder of model outputs (Qwen/KIEval JSON), matched by file name")
    docile = _import_format(formats, "docile", "a DocILE dataset folder: key fields, line items and OCR",
                            "the dataset folder (annotations/, ocr/) or one of its split files",
                            predictions="canonical prediction records (.jsonl), joined on id")
    docile.add_argument("--segment", choices=("block", "line"), default="block",
                        help="which docTR unit bounds the spans used for grounding (default: block)")
    _import_format(formats, "textract-expense", "AWS Textract AnalyzeExpense responses: predictions only",
                   "a response .json file or a folder of them", predictions=None)
    _import_format(formats, "dude", "DUDE questions: ground truth, and a submission's answers",
                   "the DUDE ground-truth JSON", predictions="a DUDE submission (answers, answers_confidence)")
    _service_arguments(_import_format(formats, "azure-di", "Azure Document Intelligence / Form Recognizer analyze "
                                      "results (v2.1, v3 and later)", "a result .json file or a folder of them",
                                      predictions=None), values=("text", "typed"))
    google = _import_format(formats, "google-docai", "a Google Document AI Document (entities, pages)",
                            "a Document .json file, or a folder of the shards of one", predictions=None)
    _service_arguments(google, values=("mention", "normalized"))
    google.add_argument("--id", dest="document_id", metavar="ID",
                        help="the record's id (default: the file's stem, or the folder's name)")
    _service_arguments(_import_format(formats, "mindee", "Mindee API responses (v1 predictions, v2 inferences)",
                                      "a response .json file or a folder of them", predictions=None), values=None)
    label_studio = _import_format(formats, "label-studio", "a Label Studio JSON export: annotations as ground "
                                  "truth, predictions with their scores", "the export (a JSON list of tasks)",
                                  predictions=None)
    label_studio.add_argument("--id-from", default="id", metavar="FIELD",
                              help="the record id: id (the task's) or data.KEY, the file name without extension of "
                                   "the document the task's data.KEY references (default: id)")
    label_studio.add_argument("--review-log", type=Path, metavar="FILE",
                              help="also write the reviews as a production log for rpa-sim estimate (JSON Lines, "
                                   "gzip when it ends in .gz, atomically): a review row per predicted entity "
                                   "(default: none)")
    mapping = _import_format(formats, "mapping", "any other JSON or JSON Lines output (an in-house service, an LLM "
                             "extractor), read as a mapping file says", "a .json, .jsonl or .jsonl.gz file, or a "
                             "folder of them", predictions=None)
    mapping.add_argument("--mapping", type=Path, required=True, metavar="YAML",
                         help="where the id, the fields, their keys, values, confidences and boxes are: paths such as "
                              "$.fields.* (docs/importers/mapping.md) (required)")
    _service_arguments(mapping, values=None)
    return parser


def _service_arguments(parser: argparse.ArgumentParser, *, values: tuple[str, ...] | None) -> None:
    """The options that the importers of service outputs share (docs/importers/service.md)."""
    if values is not None:
        parser.add_argument("--value", choices=values, default=values[0],
                            help=f"which string is the value (default: {values[0]}; docs/importers)")
    parser.add_argument("--ground-truth", type=Path, metavar="G",
                        help="ground truth joined by document id: {id: {field: value}} JSON, one document's "
                             "{\"fields\": {...}}, or canonical records (.jsonl); writes full records (default: "
                             "none, predictions only)")
    parser.add_argument("--fields", type=Path, metavar="MAP",
                        help="YAML map of the service's field names to ground-truth keys (null drops a field) "
                             "(default: none, the service's names)")


def _import_format(formats: Any, name: str, summary: str, source: str, *,
                   predictions: str | None) -> argparse.ArgumentParser:
    parser = formats.add_parser(name, help=summary)
    parser.add_argument("source", type=Path, metavar="SRC", help=source)
    parser.add_argument("--out", type=Path, required=True, metavar="FILE",
                        help="canonical .jsonl output, gzip-compressed when it ends in .gz; missing folders are "
                             "created (required)")
    if predictions is not None:
        parser.add_argument("--predictions", type=Path, metavar="P", help=f"{predictions} (default: none)")
    return parser


def _data_arguments(parser: argparse.ArgumentParser, *, tables: bool = True, option: str | None = None) -> None:
    """DATA and the options that read it; with ``option`` (what it is for), DATA is the option ``--data``."""
    parser.add_argument(*(("--data",) if option else ("data",)), type=Path, metavar="DATA",
                        help=(f"{option} (default: none): " if option else "")
                        + "records (.jsonl or .jsonl.gz), a regular file" + (
                            "; or an outcome table from rpa-sim evaluate (a .parquet file, or any file that starts "
                            "with Parquet's PAR1), which gives the same results without evaluating again"
                            if tables else "") + "; or shards of the data: a folder (its *.jsonl, *.jsonl.gz and "
                        "*.parquet files, in name order) or a quoted glob such as 'data/*.jsonl.gz' (docs/scale.md)")
    parser.add_argument("--predictions", type=Path, metavar="FILE",
                        help="predictions joined to DATA on id, DATA then holding the ground truth (default: none, "
                             "DATA holds both)")
    parser.add_argument("--task", choices=("kie", "vqa"), help="kie or vqa (default: inferred from the records)")
    parser.add_argument("--skip-invalid", action="store_true",
                        help="skip records that do not fit the format and report them, instead of stopping "
                             "(default: stop at the first)")
    # None = not given: each option applies to one task only, which is known once the records are open
    parser.add_argument("--value-match", choices=("exact", "normalized"),
                        help="KIE only: compare values exactly (the official KIEval) or with case and spaces "
                             "folded (default: exact)")
    parser.add_argument("--alpha", type=_SHARE, metavar="A",
                        help="VQA only: SMuDGE's weight of the match score, in [0, 1] (default: 0.25)")
    parser.add_argument("--workers", type=_POSITIVE, default=available_cores(), metavar="N",
                        help="processes that evaluate the records, at most one per core and per batch of 256 "
                             "records (a larger N is capped); results are identical for any N (default: every core "
                             "this process may use)")
    _scheduler_argument(parser)


def _scheduler_argument(parser: argparse.ArgumentParser, *, scenario: bool = False) -> None:
    parser.add_argument("--scheduler", type=_scheduler, metavar="ADDRESS",
                        help="evaluate on Dask (pip install \"rpa-sim[dask]\"), a task per shard of DATA: "
                             "tcp://HOST:PORT of a running 'dask scheduler', or local / local:N for N worker "
                             "processes on this machine (at most one per core and per shard); results are identical "
                             "(docs/scale.md)" + (
                                 " (default: the scenario's data: scheduler:, else none)" if scenario else
                                 "; --workers is then unused (default: none, this machine's processes)"))


def _scheduler(text: str) -> str:
    from rpa_sim.evaluate.cluster import parse_scheduler  # noqa: PLC0415

    try:
        return parse_scheduler(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None


def _monitored_policy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", required=True, metavar="P",
                        help="a policy file or bundled policy name (required)")
    parser.add_argument("--threshold", type=_bounded(float, low=0.0, high=math.inf, open_high=True), required=True,
                        metavar="T", help="the policy's swept threshold: an item is routed when T is above its score, "
                                          "a number >= 0 (required)")


def _confidence_level_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--confidence-level", type=_OPEN_SHARE, default=0.95, metavar="L",
                        help="the intervals' nominal coverage, in (0, 1) (default: 0.95)")


def _format_arguments(parser: argparse.ArgumentParser, *, what: str, default: str | None = "table",
                      default_help: str = "table") -> argparse._MutuallyExclusiveGroup:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--format", choices=FORMATS, default=default,
                       help=f"how to print {what}: an aligned table, CSV (a header line, then a line per row) "
                            f"or JSON (default: {default_help})")
    group.add_argument("--json", action="store_const", const="json", dest="format", help="same as --format json")
    return group


def _folder_argument(parser: argparse.ArgumentParser, option: str, old: str, *, help: str) -> None:
    group = parser.add_mutually_exclusive_group()
    dest = option.removeprefix("--").replace("-", "_")
    group.add_argument(option, type=Path, metavar="DIR", dest=dest, help=help)
    group.add_argument(old, type=Path, metavar="DIR", dest=dest, action=_DeprecatedAlias, replacement=option)


# --------------------------------------------------------------------------- formatting


def _threshold(thresholds: Sequence[float], index: int) -> str:
    """A threshold for the table; the point one step above the previous one (the top of an exact grid,
    which routes everything the policy can route) reads ``>1 (all)`` rather than ``1.0000``.

    >>> _threshold([0.5, 1.0, math.nextafter(1.0, 2.0)], 2), _threshold([0.5, 0.75], 1)
    ('>1 (all)', '0.7500')
    """
    value = thresholds[index]
    if index and value == math.nextafter(thresholds[index - 1], math.inf):
        below = f"{thresholds[index - 1]:.4f}".rstrip("0").rstrip(".")
        return f">{below} (all)" if index == len(thresholds) - 1 else f">{below}"
    return f"{value:.4f}"


def _table(rows: Sequence[tuple[str, float | int | None]]) -> str:
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"  {name:<{width}}  {_number(value):>10}" for name, value in rows)


def _number(value: float | int | None) -> str:
    """A figure of a table: an int is a count, a float a measure (:mod:`rpa_sim.common.formatting`); ``n/a`` when absent."""
    from rpa_sim.common.formatting import count, number  # noqa: PLC0415

    return count(value, missing="n/a") if isinstance(value, int) else number(value, missing="n/a")


def _counts(values: list[float]) -> list[str]:
    """Expected counts as a table shows them; a column of whole numbers (the usual case) in one pass."""
    from rpa_sim.common.formatting import expected_count  # noqa: PLC0415

    if all(value.is_integer() for value in values):
        return [f"{int(value):,}" for value in values]
    return [expected_count(value, missing="n/a") for value in values]


def _curve_table(curves: list[Curve]) -> str:
    from rpa_sim.route.sweep import aligned_curves  # noqa: PLC0415

    # cells are made a column at a time: an exact curve has a row per distinct confidence, often tens of thousands
    curves = aligned_curves(curves)
    names = curves[0].column_names()
    columns: list[list[str]] = [[name] for name in names]
    for curve in curves:
        thresholds = curve.threshold.tolist()
        for cells, name in zip(columns, names):
            if name == "policy":
                cells.extend([curve.policy] * len(thresholds))
            elif name == "threshold":
                cells.extend(_threshold(thresholds, index) for index in range(len(thresholds)))
            elif name in _COUNT_COLUMNS:
                cells.extend(_counts(curve.columns[name].astype(float).tolist()))
            else:
                cells.extend(map(_number, curve.columns[name].tolist()))
    widths = [max(map(len, cells)) for cells in columns]
    padded = [[cell.rjust(width) for cell in cells] for cells, width in zip(columns, widths)]
    return "\n".join(map("  ".join, zip(*padded)))


def _json_text(payload: Any) -> str:
    from rpa_sim.common.jsontext import dumps  # noqa: PLC0415

    return dumps(payload, indent=2)


def _csv_text(rows: list[dict[str, Any]]) -> str:
    """Rows of one shape as CSV: a header line, then a line per row; ``None`` (and NaN, infinity) is an empty cell."""
    import csv  # noqa: PLC0415
    import io  # noqa: PLC0415

    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(rows[0])
    for row in rows:
        writer.writerow(["" if value is None or (isinstance(value, float) and not math.isfinite(value))
                         else repr(value) if isinstance(value, float) else value for value in row.values()])
    return text.getvalue()


def _print(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _write_or_print(text: str, out: Path | None) -> None:
    if out is None:
        _print(text)
        return
    from rpa_sim.common.files import atomic_write_text  # noqa: PLC0415

    atomic_write_text(out, text if text.endswith("\n") else text + "\n")
    print(f"wrote {out}", file=sys.stderr)


# --------------------------------------------------------------------------- commands


@shows_progress
def _evaluate_to_file(args: argparse.Namespace) -> int:
    from rpa_sim.evaluate.sources import resolve_shards  # noqa: PLC0415
    from rpa_sim.evaluate.tablefile import is_table_file, write_table  # noqa: PLC0415

    # an --out that ends with a slash is a partitioned dataset, a table per shard; an existing folder named
    # without it stays an error, so that a slip of the keyboard never replaces a folder's partitions
    folder = args.out.endswith(("/", os.sep))
    args.out = Path(args.out)
    if not folder:
        _check_output(args.out)
    shards = resolve_shards(args.data)
    table_shard = next((shard for shard in shards if is_table_file(shard)), None)
    if table_shard is not None:
        raise UsageError(f"evaluate: {table_shard} is an outcome table already; evaluate reads records")
    if folder:
        return _evaluate_to_folder(args)
    table = evaluate_data(args)
    sources = [*shards] if args.predictions is None else [*shards, args.predictions]
    with stage(f"writing {args.out.name}"):
        write_table(table, args.out, source=sources, skipped=args.skipped)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _evaluate_to_folder(args: argparse.Namespace) -> int:
    """``evaluate DATA --out TABLES/``: an outcome table per shard of DATA (``part-00000.parquet``, ...)."""
    from rpa_sim.evaluate.sources import check_partitions_folder, write_partitions  # noqa: PLC0415

    check_partitions_folder(args.out)
    loaded = evaluate_each_shard(args)  # merged too: what reading the folder back will check
    shards = loaded.shards
    with stage(f"writing {len(shards)} tables into {args.out}"):
        write_partitions(loaded.parts, shards, args.out, predictions=args.predictions)
    print(f"wrote {len(shards)} outcome table{'' if len(shards) == 1 else 's'} into {args.out}", file=sys.stderr)
    return 0


@shows_progress
def _score(args: argparse.Namespace) -> int:
    # the corpus figures never read the routing grounding, the slowest part of evaluating records with OCR
    table = evaluate_data(args, locate=False)
    text = f"{table.score_title}\n{_table(table.score_rows())}"
    payload = {**table.summary(), "skipped": args.skipped}
    _print({"table": lambda: text, "csv": lambda: _csv_text([payload]),
            "json": lambda: _json_text(payload)}[args.format]())
    return 0


@shows_progress
def _sweep(args: argparse.Namespace) -> int:
    from rpa_sim.route.policies import load_policy  # noqa: PLC0415
    from rpa_sim.route.reviewer import Reviewer  # noqa: PLC0415
    from rpa_sim.route.sweep import Sweeper, curves_to_csv, curves_to_json, parse_thresholds  # noqa: PLC0415

    _check_output(args.out)
    policies = [load_policy(p) for p in args.policy]
    try:
        grid = parse_thresholds(args.thresholds)
    except InputError as problem:  # the grid is part of the command line: a usage error
        raise UsageError(str(problem)) from None
    reviewer = Reviewer(miss_rate=args.miss_rate, false_correction_rate=args.false_correction_rate)
    table = evaluate_data(args, policies=policies)
    curves = []
    with stage("sweeping", total=len(policies)) as advance:
        for policy in policies:
            sweeper = Sweeper(table, policy, reviewer=reviewer)
            curve = sweeper.curve(grid)
            if args.replicates:
                curve = curve.with_spread(sweeper.replicate(args.replicates, seed=args.seed, grid=curve.threshold))
            curves.append(curve)
            advance(1)
    text = {"csv": curves_to_csv, "json": curves_to_json, "table": _curve_table}[args.format](curves)
    _write_or_print(text, args.out)
    return 0


@shows_progress
def _certify(args: argparse.Namespace) -> int:
    from rpa_sim.route.certify import certify_threshold  # noqa: PLC0415

    table = evaluate_data(args)
    if args.by is not None:
        return _certify_per_group(args, table)
    with stage("certifying"):
        try:
            result = certify_threshold(table.confidence, table.errors(), max_error=args.max_error, delta=args.delta,
                                       calibration_fraction=args.calibration_fraction, seed=args.seed,
                                       groups=table.review_units)
        except ValueError as problem:
            raise InputError(str(problem)) from None
    payload = result.to_dict()
    _print({"table": lambda: result.guarantee, "csv": lambda: _csv_text([payload]),
            "json": lambda: _json_text(payload)}[args.format]())
    return 0


def _certify_per_group(args: argparse.Namespace, table: OutcomeTable) -> int:
    """``certify --by``: one certified threshold per document type or field; rows carry the part's name first."""
    from rpa_sim.route.certify import certify_per_group  # noqa: PLC0415

    codes, names = ((table.document_type_codes, table.document_types) if args.by == "document_type"
                    else (table.field_codes, table.field_names))
    with stage("certifying"):
        try:
            results = certify_per_group(table.confidence, table.errors(), codes, names, groups=table.review_units,
                                        max_error=args.max_error, delta=args.delta,
                                        calibration_fraction=args.calibration_fraction, seed=args.seed)
        except ValueError as problem:
            raise InputError(str(problem)) from None
    rows = [{args.by: name, **result.to_dict()} for name, result in results.items()]
    text = "\n\n".join(f"{args.by} {name or '(none)'!s}: {result.guarantee}" for name, result in results.items())
    _print({"table": lambda: text, "csv": lambda: _csv_text(rows) if rows else "",
            "json": lambda: _json_text(rows)}[args.format]())
    return 0


def _comparison_rows(result: ScenarioResult) -> list[dict[str, Any]]:
    """The comparison table's columns, one row per policy, for CSV."""
    summary = result.typed_summary
    rejecting = any(policy.rejected is not None for policy in summary.policies)
    rows = []
    for policy in summary.policies:
        row: dict[str, Any] = {"policy": policy.policy, "auc": policy.auc}
        for target, point in policy.operating_points.items():
            row[f"auto_rate_at_{target}"] = None if point is None else point.auto_rate
        if rejecting:
            row["rejected"] = policy.rejected or 0
        if summary.costs is not None:
            best = policy.cost_optimum
            row.update(best_cost=best.cost, best_cost_threshold=best.threshold,
                       savings_vs_review_all=best.savings_vs_review_all)
        row["certified_threshold"] = None if policy.certified is None else policy.certified.threshold
        row["dominated_by"] = " ".join(policy.dominated_by)
        rows.append(row)
    return rows


def _scenario_scheduler(args: argparse.Namespace, scenario: Any) -> contextlib.AbstractContextManager[None]:
    """The Dask scheduler of a scenario's data (``--scheduler``, else its ``data: scheduler:``) for the run."""
    from rpa_sim.evaluate.cluster import using_scheduler  # noqa: PLC0415

    scheduler = getattr(args, "scheduler", None) or scenario.data.scheduler
    if scheduler is not None and scenario.data.file is None:
        raise UsageError(f"--scheduler evaluates a scenario's data: file: on Dask, and scenario {scenario.name!r} "
                         f"generates its records")
    return using_scheduler(scheduler)


@shows_progress
def _run(args: argparse.Namespace) -> int:
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    _check_output_folder(args.out_dir)
    scenario, base = load_scenario(args.scenario)
    # the study's modules take seconds to import: a scenario refused (a size too large) is refused before
    from rpa_sim.study.run import comparison_table, run_scenario, write_outputs  # noqa: PLC0415
    with _scenario_scheduler(args, scenario), stage(f"running {scenario.name}"):
        result = run_scenario(scenario, base)
    # everything computed before anything is written
    summary = result.typed_summary
    text = {"table": lambda: f"{scenario.name}: {scenario.description}\n\n{comparison_table(result)}",
            "csv": lambda: _csv_text(_comparison_rows(result)),
            "json": summary.to_json}[args.format or "table"]()
    if (args.format or "table") == "table" and summary.operations is not None:
        from rpa_sim.operate.queue.summary import operations_table  # noqa: PLC0415

        currency = None if summary.costs is None else summary.costs.currency
        text += "\n\n" + operations_table(summary.operations, currency=currency)
    if (args.format or "table") == "table":
        from rpa_sim.study.decision import decision_text  # noqa: PLC0415

        text += "\n\n" + decision_text(summary.decision)
    if args.out_dir is not None:
        for path in write_outputs(result, args.out_dir):
            print(f"wrote {path}", file=sys.stderr)
    _print(text)
    return 0


@shows_progress
def _import(args: argparse.Namespace) -> int:
    from rpa_sim.records.readers import write_records  # noqa: PLC0415

    _check_output(args.out)
    if args.format == "kieval-csv":
        from rpa_sim.records.importers.kieval_csv import import_kieval_csv  # noqa: PLC0415

        shortlist = None if args.shortlist is None else {k.strip() for k in args.shortlist.split(",") if k.strip()}
        records, report = import_kieval_csv(args.source, shortlist=shortlist)
    elif args.format == "cord":
        from rpa_sim.records.importers.cord import import_cord  # noqa: PLC0415

        records, report = import_cord(args.source, predictions=args.predictions)
    elif args.format == "docile":
        from rpa_sim.records.importers.docile import import_docile  # noqa: PLC0415

        records, report = import_docile(args.source, predictions=args.predictions, segment=args.segment)
    elif args.format == "textract-expense":
        from rpa_sim.records.importers.textract import import_textract_expense  # noqa: PLC0415

        records, report = import_textract_expense(args.source)
    elif args.format == "label-studio":
        from rpa_sim.records.importers.label_studio import import_label_studio  # noqa: PLC0415

        if args.review_log is not None and args.review_log.resolve() == args.out.resolve():
            raise UsageError(f"--review-log {args.review_log} is --out {args.out}: give them different files")
        records, report = import_label_studio(args.source, id_from=args.id_from, review_log=args.review_log)
    elif args.format == "mapping":
        from rpa_sim.records.importers.mapping import import_mapping  # noqa: PLC0415

        records, report = import_mapping(args.source, mapping=args.mapping, ground_truth=args.ground_truth,
                                         fields=args.fields)
    elif args.format == "dude":
        from rpa_sim.records.importers.dude import import_dude  # noqa: PLC0415

        records, report = import_dude(args.source, predictions=args.predictions)
    elif args.format == "azure-di":
        from rpa_sim.records.importers.azure_di import import_azure_di  # noqa: PLC0415

        records, report = import_azure_di(args.source, value=args.value, ground_truth=args.ground_truth,
                                          fields=args.fields)
    elif args.format == "google-docai":
        from rpa_sim.records.importers.google_docai import import_google_docai  # noqa: PLC0415

        records, report = import_google_docai(args.source, value=args.value, document_id=args.document_id,
                                              ground_truth=args.ground_truth, fields=args.fields)
    else:
        from rpa_sim.records.importers.mindee import import_mindee  # noqa: PLC0415

        records, report = import_mindee(args.source, ground_truth=args.ground_truth, fields=args.fields)
    written = write_records(track(records, "importing records"), args.out)
    print(f"wrote {written} records to {args.out}", file=sys.stderr)
    for line in report.lines():
        print(line, file=sys.stderr)
    return 0


@shows_progress
def _report(args: argparse.Namespace) -> int:
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    _check_output(args.out)
    _check_output_folder(args.png_dir)
    # the HTML is written first: the plots' folder would then be a file, and the command fail with it left behind
    if args.png_dir is not None and args.out.resolve() in (args.png_dir.resolve(), *args.png_dir.resolve().parents):
        raise UsageError(f"report: --png-dir {args.png_dir} is the --out file {args.out} or inside it; the plots "
                         f"need a folder of their own")
    scenario, base = load_scenario(args.scenario)
    from rpa_sim.report.page import write_report  # noqa: PLC0415
    from rpa_sim.study.run import run_scenario  # noqa: PLC0415
    with _scenario_scheduler(args, scenario), stage(f"running {scenario.name}"):
        result = run_scenario(scenario, base)
    with stage("drawing the report"):
        path = write_report(result, args.out, png_dir=args.png_dir, scenario_source=args.scenario)
    print(f"wrote {path}", file=sys.stderr)
    return 0


@shows_progress
def _generate(args: argparse.Namespace) -> int:
    from rpa_sim.common.yamlfile import read_yaml, validated  # noqa: PLC0415
    from rpa_sim.records.synthetic import DocVQASettings, ReceiptSettings, write_dataset  # noqa: PLC0415

    _check_output(args.out)
    model = ReceiptSettings if args.kind == "receipts" else DocVQASettings
    settings = model() if args.settings is None else validated(model, read_yaml(args.settings) or {},
                                                               source=str(args.settings))
    with stage(f"generating {args.kind}", total=args.n) as advance:
        written = write_dataset(args.kind, args.out, n=args.n, seed=args.seed, settings=settings,
                                workers=args.workers, progress=advance)
    print(f"wrote {written} {args.kind} records to {args.out}", file=sys.stderr)
    return 0


_STAFF_TABLE_ROWS = ("reviewers", "target_service_level", "offered_load", "tasks", "p_wait", "service_level",
                     "mean_wait_seconds", "occupancy", "p_abandon", "backlog_at_end")


def _simulated_staff(args: argparse.Namespace, reviewers: int) -> dict[str, Any]:
    from rpa_sim.operate.queue.settings import QueueSettings  # noqa: PLC0415
    from rpa_sim.operate.queue.simulation import simulate_queue  # noqa: PLC0415

    hours = 168.0 if args.hours is None else args.hours
    seed = 0 if args.seed is None else args.seed
    tasks = args.arrivals_per_hour * hours
    if tasks > limits.MOST_SIMULATED_TASKS:
        raise UsageError(f"staff: --simulate would draw about {tasks:,.0f} tasks (--arrivals-per-hour x --hours), "
                         f"more than {limits.MOST_SIMULATED_TASKS:,} (a fixed ceiling for time); shorten --hours")
    limits.require_memory(tasks * limits.SIMULATED_TASK_BYTES,
                          what=f"staff: --simulate's {tasks:,.0f} tasks (--arrivals-per-hour x --hours)")
    patience = None if args.patience is None else {"seconds": args.patience, "distribution": "exponential",
                                                   "on_expiry": "release"}
    settings = QueueSettings(arrivals={"per_hour": args.arrivals_per_hour},
                             handling={"per_task": {"kind": "exponential", "mean_seconds": args.handle_seconds}},
                             reviewers={"count": reviewers}, patience=patience,
                             answer_within_seconds=args.answer_within, hours=hours)
    with stage(f"simulating {hours:g} hours"):
        run = simulate_queue(settings, seed=seed).runs[0]
    load = args.arrivals_per_hour * args.handle_seconds / 3600.0
    note = None
    if args.patience is None and load >= reviewers:
        note = (f"overloaded: {load:.6g} erlangs of work need more than {reviewers} reviewers; the backlog grows "
                f"({' '.join(str(n) for n in run['backlog_at_day_end'])} tasks at the end of each day)")
    figures = ("tasks", "p_wait", "service_level", "mean_wait_seconds", "mean_time_in_queue_seconds",
               "mean_queue_length", "occupancy", "p_abandon", "backlog_at_day_end", "backlog_at_end")
    return {"method": "simulation", "reviewers": reviewers, "arrivals_per_hour": args.arrivals_per_hour,
            "handle_seconds": args.handle_seconds, "answer_within_seconds": args.answer_within,
            "patience_seconds": args.patience, "offered_load": load, "hours": hours, "seed": seed,
            **{name: run[name] for name in figures}, "note": note}


def _staff_scenario(args: argparse.Namespace) -> int:
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    given = [flag for flag, value in (("--arrivals-per-hour", args.arrivals_per_hour),
                                      ("--handle-seconds", args.handle_seconds),
                                      ("--answer-within", args.answer_within),
                                      ("--reviewers", args.reviewers), ("--service-level", args.service_level),
                                      ("--patience", args.patience), ("--simulate", args.simulate or None),
                                      ("--hours", args.hours), ("--seed", args.seed)) if value is not None]
    if given:
        raise UsageError(f"staff: {given[0]} describes a queue by itself; with a SCENARIO the queue is its "
                         f"operations: section")
    scenario, base = load_scenario(args.scenario)
    if scenario.operations is None:
        raise InputError(f"staff: scenario {args.scenario} has no operations: section (arrivals, reviewers, "
                         f"service level); see docs/operations.md")
    from rpa_sim.operate.queue.summary import staffing_rows, staffing_table  # noqa: PLC0415
    from rpa_sim.study.result import encoded  # noqa: PLC0415
    from rpa_sim.study.run import run_scenario  # noqa: PLC0415
    with stage(f"running {scenario.name}"):
        operations = run_scenario(scenario, base).typed_summary.operations
    _print({"table": lambda: staffing_table(operations), "csv": lambda: _csv_text(staffing_rows(operations)),
            "json": lambda: _json_text(encoded(operations))}[args.format]())
    return 0


def _staff_table(payload: dict[str, Any]) -> str:
    title = {"erlang-c": "Erlang C (M/M/c)", "erlang-a": "Erlang A (M/M/c+M)"}.get(
        payload["method"], f"simulation of {payload.get('hours', 0):g} hours (seed {payload.get('seed')})")
    text = f"{title}\n{_table([(name, payload[name]) for name in _STAFF_TABLE_ROWS if name in payload])}"
    return text if payload["note"] is None else f"{text}\n{payload['note']}"


@shows_progress
def _staff(args: argparse.Namespace) -> int:
    from rpa_sim.operate.queue.erlang import queue_figures  # noqa: PLC0415
    from rpa_sim.operate.queue.staffing import required_reviewers  # noqa: PLC0415

    if args.scenario is not None:
        return _staff_scenario(args)
    missing = [flag for flag, value in (("--arrivals-per-hour", args.arrivals_per_hour),
                                        ("--handle-seconds", args.handle_seconds),
                                        ("--answer-within", args.answer_within)) if value is None]
    if missing:
        raise UsageError(f"staff: the following arguments are required: {', '.join(missing)} (or a SCENARIO) "
                         f"(see 'rpa-sim staff --help')")
    if args.reviewers is None and args.service_level is None:
        raise UsageError("staff: one of the arguments --reviewers --service-level is required (see 'rpa-sim staff "
                         "--help')")
    if not args.simulate and (args.hours is not None or args.seed is not None):
        raise UsageError("staff: --hours and --seed go with --simulate")
    load = args.arrivals_per_hour * args.handle_seconds / 3600.0
    if (args.reviewers or 0) > limits.MOST_REVIEWERS:
        raise UsageError(f"staff: --reviewers {args.reviewers:,} is more than the {limits.MOST_REVIEWERS:,} this "
                         f"command takes")
    if load > limits.MOST_REVIEWERS:
        raise UsageError(f"staff: {load:,.6g} erlangs of work (--arrivals-per-hour x --handle-seconds / 3600) need "
                         f"more than the {limits.MOST_REVIEWERS:,} reviewers this command takes")
    queue = {"arrivals_per_hour": args.arrivals_per_hour, "handle_seconds": args.handle_seconds,
             "answer_within_seconds": args.answer_within, "patience_seconds": args.patience}
    reviewers, figures = args.reviewers, None
    try:
        if reviewers is None:
            figures = required_reviewers(**queue, service_level=args.service_level).figures
            reviewers = figures.reviewers
        elif not args.simulate:
            figures = queue_figures(**queue, reviewers=reviewers)
    except ValueError as problem:
        raise InputError(f"staff: {problem}") from None
    payload = _simulated_staff(args, reviewers) if args.simulate else figures.to_dict()
    if args.service_level is not None:
        payload = {"target_service_level": args.service_level, **payload}
    row = {name: " ".join(map(str, value)) if isinstance(value, list) else value for name, value in payload.items()}
    _print({"table": lambda: _staff_table(payload), "csv": lambda: _csv_text([row]),
            "json": lambda: _json_text(payload)}[args.format]())
    return 0


# --------------------------------------------------------------------------- production monitoring


@shows_progress
def _replay(args: argparse.Namespace) -> int:
    from rpa_sim.operate.monitoring.audit_plan import load_audit_plan  # noqa: PLC0415
    from rpa_sim.operate.monitoring.log import write_log  # noqa: PLC0415
    from rpa_sim.operate.monitoring.replay import Replayer  # noqa: PLC0415
    from rpa_sim.route.policies import load_policy  # noqa: PLC0415
    from rpa_sim.route.reviewer import Reviewer  # noqa: PLC0415

    _check_output(args.log)
    policy = load_policy(args.policy)
    audit = args.audit_rate if args.audit_plan is None else load_audit_plan(args.audit_plan)
    table = evaluate_data(args)
    reviewer = Reviewer(miss_rate=args.miss_rate, false_correction_rate=args.false_correction_rate)
    with stage("replaying the day"):
        day = Replayer(table, policy, threshold=args.threshold, audit=audit).day(seed=args.seed, reviewer=reviewer)
    with stage(f"writing {args.log.name}"):
        write_log(day.log, args.log)
    counts = day.log.counts()
    print(f"wrote {args.log}: {counts['rows']:,} rows, {counts['reviewed']:,} reviewed, {counts['auto_accepted']:,} "
          f"auto-accepted ({counts['audited']:,} audited)", file=sys.stderr)
    return 0


def _interval_text(interval: dict[str, float | None]) -> str:
    return f"{_number(interval['estimate'])}  [{_number(interval['low'])}, {_number(interval['high'])}]"


def _named_lines(rows: Sequence[tuple[str, str]]) -> str:
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"  {name:<{width}}  {value}" for name, value in rows)


def _estimate_table(payload: dict[str, Any]) -> str:
    level = f"{payload['confidence_level'] * 100:g}%"
    rows = [("rows", _number(payload["rows"])), ("reviewed", _number(payload["reviewed"])),
            ("auto-accepted", _number(payload["auto_accepted"])), ("audited", _number(payload["audited"])),
            ("errors found by audits", _number(payload["audit_errors"])),
            ("errors reported by reviewers", _number(payload["reviewed_errors"])),
            ("auto-accepted error rate", _interval_text(payload["auto_error"])),
            ("post-correction quality", _interval_text(payload["post_correction_quality"])),
            ("naive (reviewed rows only)", _number(payload["naive"]))]
    if payload["horvitz_thompson"] is not None:
        rows.append(("Horvitz-Thompson estimate", _number(payload["horvitz_thompson"])))
    if payload["power_tuning"] is not None:
        rows.append(("PPI++ lambda", _number(payload["power_tuning"])))
    for stratum in payload["strata"] or ():
        rows.append((f"stratum {stratum['stratum']}",
                     f"rate {stratum['inclusion_probability']:g}: {stratum['audited']:,} of "
                     f"{stratum['auto_accepted']:,} audited, {stratum['errors']:,} errors, {_interval_text(stratum)}"))
    return f"{payload['method']} estimate, {level} intervals\n{_named_lines(rows)}"


def _estimate(args: argparse.Namespace) -> int:
    from rpa_sim.operate.monitoring.estimators import estimate  # noqa: PLC0415
    from rpa_sim.operate.monitoring.log import read_log  # noqa: PLC0415

    result = estimate(read_log(args.log, need_confidence=args.method == "ppi"), method=args.method,
                      confidence_level=args.confidence_level)
    payload = result.to_dict()
    _print({"table": lambda: _estimate_table(payload), "csv": lambda: _csv_text([result.to_row()]),
            "json": lambda: _json_text(payload)}[args.format]())
    return 0


def _plan_table(payload: dict[str, Any]) -> str:
    from rpa_sim.common.formatting import money  # noqa: PLC0415

    level = f"{payload['confidence_level'] * 100:g}%"
    cost = "" if payload["cost"] is None else f", cost {money(payload['cost'])}"
    head = (f"audit plan for {payload['policy']} at threshold {payload['threshold']:g}: {payload['audits']:,} audits "
            f"of {payload['auto_accepted']:,} auto-accepted items{cost}\n"
            f"expected width at {level}: {_number(payload['expected_width'])} (a uniform audit of as many: "
            f"{_number(payload['uniform_width'])}; the exact stratified interval: {_number(payload['exact_width'])})")
    names = ["band", "auto-accepted", "prior error", "audits", "rate"]
    rows = [[band["band"], _number(band["auto_accepted"]), _number(band["prior_error"]), _number(band["audits"]),
             _number(band["rate"])] for band in payload["bands"]]
    widths = [max(len(cell) for cell in column) for column in zip(names, *rows)]
    lines = ["  ".join(cell.ljust(w) if index == 0 else cell.rjust(w)
                       for index, (cell, w) in enumerate(zip(line, widths))) for line in [names, *rows]]
    return head + "\n" + "\n".join(lines)


@shows_progress
def _plan_audit(args: argparse.Namespace) -> int:
    from rpa_sim.operate.monitoring.planning import plan_audit  # noqa: PLC0415
    from rpa_sim.route.policies import load_policy  # noqa: PLC0415

    _check_output(args.out)
    policy = load_policy(args.policy)
    table = evaluate_data(args)
    with stage("planning the audit"):
        try:
            planned = plan_audit(table, policy, threshold=args.threshold, target_width=args.target_width,
                                 budget=args.budget, bands=args.bands, confidence_level=args.confidence_level,
                                 cost_per_audit=args.cost_per_audit)
        except InputError:
            raise
        except ValueError as problem:  # the options' values, such as a cost per audit that overflows the cost
            raise UsageError(f"plan-audit: {problem}") from None
    payload = planned.to_dict()
    text = {"table": lambda: _plan_table(payload), "csv": lambda: _csv_text(payload["bands"]),
            "json": lambda: _json_text(payload)}[args.format]()
    if args.out is not None:
        from rpa_sim.common.files import atomic_write_text  # noqa: PLC0415

        atomic_write_text(args.out, planned.to_yaml())
        print(f"wrote {args.out}", file=sys.stderr)
    _print(text)
    return 0


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _demo(args: argparse.Namespace) -> int:
    if args.format is None and _interactive():
        from rpa_sim.tui import run_dashboard  # noqa: PLC0415

        return run_dashboard(DEMO_SCENARIO)
    args.scenario, args.out_dir = DEMO_SCENARIO, None
    return _run(args)


def _dashboard(args: argparse.Namespace) -> int:
    if not _interactive():
        raise UsageError("dashboard: needs a terminal, and standard input or output is not one; "
                         "'rpa-sim run SCENARIO' prints the comparison as text")
    _check_output_folder(args.out_dir)
    from rpa_sim.tui import run_dashboard  # noqa: PLC0415

    return run_dashboard(args.source, export_dir=args.out_dir)


def _check_output(path: Path | None) -> None:
    if path is not None:
        from rpa_sim.common.files import check_output  # noqa: PLC0415

        check_output(path)


def _check_output_folder(path: Path | None) -> None:
    if path is not None:
        from rpa_sim.common.files import check_output_folder  # noqa: PLC0415

        check_output_folder(path)


# --------------------------------------------------------------------------- export-policy (docs/export.md)


def _export_policy_arguments(commands: Any) -> None:
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
            _data_arguments(parser)
        else:
            _data_arguments(parser, option="the fields to state: every field of DATA, and no other")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--policy", metavar="P", help="a policy file or bundled policy name, with --threshold "
                                                          "(default: none; this or --from is required)")
        source.add_argument("--from", dest="from_summary", type=Path, metavar="SUMMARY",
                            help="a study's summary.json (rpa-sim run --out-dir): its decision's policy and threshold, "
                                 "with --scenario (default: none; this or --policy is required)")
        parser.add_argument("--threshold", type=_SHARE, metavar="T",
                            help="with --policy: the policy's swept threshold τ, in [0, 1] (default: none)")
        parser.add_argument("--scenario", metavar="SCENARIO",
                            help="with --from: the scenario the study ran (file or bundled name), whose policies: "
                                 "hold the decision's policy by name (default: none)")
        parser.add_argument("--out", type=Path, required=True, metavar="FILE",
                            help="the file to write, atomically; missing folders are created (required)")
        if name == "label-studio":
            parser.add_argument("--document-url", default="{id}", metavar="TEMPLATE",
                                help="each task's data.image, {id} replaced by the record id (default: {id})")
            parser.add_argument("--model-version", metavar="NAME",
                                help="the predictions' model_version (default: DATA's file name)")
            continue
        parser.add_argument("--field", action="append", default=[], metavar="KEY",
                            help="a field to state, under its rpa-sim key (repeat for several) (default: DATA's "
                                 "fields, else those the policy names)")
        parser.add_argument("--fields", type=Path, metavar="MAP",
                            help="YAML map of the platform's field names to rpa-sim keys, as import reads it (null "
                                 "drops a name); a key's further names are its aliases (default: none)")
        parser.add_argument("--document-type", metavar="TYPE",
                            help="the thresholds of this document type (default: the policy-wide ones)")
        if name == "a2i":
            parser.add_argument("--textract-confidence", choices=("key-value", "word"), default="key-value",
                                help="the Textract confidence the policy's confidence stands for: the key-value "
                                     "pair's or its words' (default: key-value)")


@shows_progress
def _export_policy(args: argparse.Namespace) -> int:
    from rpa_sim.common.files import atomic_write_text  # noqa: PLC0415
    from rpa_sim.route.export.rules import exported_fields, policy_at  # noqa: PLC0415

    _check_output(args.out)
    rules = args.format != "label-studio"
    if args.policy is not None and args.threshold is None:
        raise UsageError("export-policy: --policy needs --threshold T (or give --from SUMMARY --scenario SCENARIO)")
    if args.from_summary is not None and args.scenario is None:
        raise UsageError("export-policy: --from needs --scenario SCENARIO: summary.json names its policy only, and "
                         "the policy's rules are in the scenario's policies:")
    if args.threshold is not None and args.policy is None:
        raise UsageError("export-policy: --threshold goes with --policy (a decision brings its own threshold)")
    if args.scenario is not None and args.from_summary is None:
        raise UsageError("export-policy: --scenario goes with --from")
    if args.data is None and (args.predictions is not None or args.task is not None or args.skip_invalid):
        raise UsageError("export-policy: --predictions, --task and --skip-invalid go with --data")
    if args.from_summary is not None:
        from rpa_sim.common.inputs import read_input  # noqa: PLC0415
        from rpa_sim.study.result import StudySummary  # noqa: PLC0415
        from rpa_sim.study.run import scenario_policies  # noqa: PLC0415
        from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

        where = str(args.from_summary)
        text = read_input(args.from_summary)
        try:
            summary = StudySummary.from_json(text)
        except InputError as problem:  # it names the key, not the file
            raise InputError(str(problem), path=where) from None
        ran, decision = summary.scenario, summary.decision
        if decision is None:
            raise InputError("holds no decision (it was written before rpa-sim decided): give --policy and "
                             "--threshold", path=where)
        if decision.policy is None:
            raise InputError(f"its decision chose no policy ({decision.reason}): give --policy and --threshold",
                             path=where)
        scenario, base = load_scenario(args.scenario)
        if scenario.name != ran:
            raise InputError(f"is the result of scenario {ran!r}, and --scenario {args.scenario} is scenario "
                             f"{scenario.name!r}", path=where)
        policies = {policy.name: policy for policy in scenario_policies(scenario, base)}
        if decision.policy not in policies:
            raise InputError(f"its decision's policy {decision.policy!r} is not among the policies of scenario "
                             f"{scenario.name!r} ({', '.join(policies)})", path=where)
        source = f"the decision of {where}" + ("" if decision.feasible else f" (not feasible: {decision.reason})")
        at = policy_at(policies[decision.policy], decision.threshold, source=source)
    else:
        from rpa_sim.route.policies import load_policy  # noqa: PLC0415

        at = policy_at(load_policy(args.policy), args.threshold, source="--threshold")
    table = None
    if args.data is not None:
        table = evaluate_data(args, policies=[at.policy])
    with stage(f"exporting {args.format}"):
        if not rules:
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
    if args.from_summary is not None and not decision.feasible:
        print(f"note: the decision of {args.from_summary} is not feasible: {decision.reason}", file=sys.stderr)
    for note in export.notes:
        print(f"note: {one_line(note)}", file=sys.stderr)
    atomic_write_text(args.out, export.text)
    print(f"wrote {args.out}: {export.summary}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- an output never replaces an input


def _named_outputs(args: argparse.Namespace) -> list[tuple[str, str | Path]]:
    """The files the command line asks to write (evaluate's ``--out DIR/``: a folder replaced whole)."""
    outputs: list[tuple[str, str | Path]] = []
    if args.command == "replay":
        outputs.append(("--log", args.log))
    elif args.command in ("evaluate", "sweep", "plan-audit", "generate", "import", "report",
                          "export-policy") and args.out is not None:
        outputs.append(("--out", args.out))
    if getattr(args, "review_log", None) is not None:
        outputs.append(("--review-log", args.review_log))
    # only a folder that exists can hold a file to replace; the modules that name the files are heavy to import
    if args.command == "run" and args.out_dir is not None and args.out_dir.is_dir():
        from rpa_sim.study.run import OUTPUT_FILES  # noqa: PLC0415

        outputs += [("--out-dir file", args.out_dir / name) for name in OUTPUT_FILES]
    if args.command == "report" and args.png_dir is not None and args.png_dir.is_dir():
        from rpa_sim.report.page import PLOT_NAMES  # noqa: PLC0415

        outputs += [("--png-dir file", args.png_dir / f"{name}.png") for name in PLOT_NAMES]
    return outputs


def _shards(data: Path) -> tuple[Path, ...]:
    from rpa_sim.evaluate.sources import resolve_shards  # noqa: PLC0415

    try:
        return resolve_shards(data)
    except InputError:  # the command says why when it reads DATA
        return ()


def _yaml_file(kind: Kind, name: str, base: Path | None = None) -> tuple[Path, ...]:
    """The file a policy or scenario name stands for (a bundled one too), or none when there is none."""
    from rpa_sim.bundled import resolve  # noqa: PLC0415

    try:
        return (Path(str(resolve(kind, name, relative_to=base))),)
    except InputError:  # the command says why when it reads it
        return ()


def _scenario_inputs(name: str) -> Iterator[tuple[str, Path]]:
    """The scenario file and every file it names: its data's shards, predictions and policy files."""
    from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

    yield from (("SCENARIO", file) for file in _yaml_file("scenario", name))
    try:
        scenario, base = load_scenario(name)
    except InputError:  # the command says why when it loads it
        return
    if scenario.data.file is not None:
        yield from (("the scenario's data", shard) for shard in _shards(base / scenario.data.file))
    if scenario.data.predictions is not None:
        yield "the scenario's predictions", base / scenario.data.predictions
    for entry in scenario.policies:
        if isinstance(entry, str):
            yield from (("the scenario's policy", file) for file in _yaml_file("policy", entry, base))


def _named_inputs(args: argparse.Namespace) -> Iterator[tuple[str, Path]]:
    """Every file the command line reads; found only when asked for, that is when an output exists already."""
    if getattr(args, "data", None) is not None:
        yield from (("DATA", shard) for shard in _shards(args.data))
    for dest, label in (("predictions", "--predictions"), ("audit_plan", "--audit-plan"), ("settings", "--settings"),
                        ("source", "SRC"), ("ground_truth", "--ground-truth"), ("fields", "--fields"),
                        ("mapping", "--mapping"), ("from_summary", "--from")):
        if getattr(args, dest, None) is not None:
            yield label, Path(getattr(args, dest))
    policies = getattr(args, "policy", None)
    for policy in [policies] if isinstance(policies, str) else policies or ():
        yield from (("--policy", file) for file in _yaml_file("policy", policy))
    if getattr(args, "scenario", None) is not None:
        yield from _scenario_inputs(args.scenario)


def _refuse_replacing_inputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output that is one of the command's inputs: bad usage (docs/cli.md)."""
    from rpa_sim.common.files import OutputIsInputError, refuse_overwriting_inputs  # noqa: PLC0415

    try:
        refuse_overwriting_inputs(_named_outputs(args), _named_inputs(args))
    except OutputIsInputError as clash:
        raise UsageError(str(clash)) from None


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": _demo, "evaluate": _evaluate_to_file, "score": _score, "sweep": _sweep, "certify": _certify, "run": _run,
    "import": _import, "generate": _generate, "report": _report, "dashboard": _dashboard, "staff": _staff,
    "replay": _replay, "estimate": _estimate, "plan-audit": _plan_audit, "export-policy": _export_policy}


# --------------------------------------------------------------------------- the error boundary


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`_Terminated` in the main thread while the command runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: Any) -> NoReturn:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _fail(message: str, status: int) -> int:
    print(f"rpa-sim: {one_line(message)}", file=sys.stderr)
    return status


def _check_input_limits() -> None:
    """Refuse a bad ``RPA_SIM_MAX_LINE_BYTES`` or ``RPA_SIM_MAX_FILE_BYTES`` as bad usage, before any work."""
    from rpa_sim.common.inputs import check_limits  # noqa: PLC0415

    try:
        check_limits()
    except ValueError as error:
        raise UsageError(str(error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 1 bad input, 2 bad usage, 130/143 signals)."""
    with _sigterm_raises():
        try:
            try:
                args = _parser().parse_args(argv)
            except SystemExit as done:  # --help, --version, or a usage error already printed
                return int(done.code or 0)
            _check_input_limits()
            _refuse_replacing_inputs(args)
            status = _COMMANDS[args.command](args)
            for warning in getattr(args, "deprecations", ()):
                print(f"rpa-sim: warning: {warning}", file=sys.stderr)
            return status
        except InputError as error:
            return _fail(f"error: {error}", EXIT_INPUT)
        except UsageError as error:
            return _fail(f"error: {error}", EXIT_USAGE)
        except KeyboardInterrupt:
            return _fail("interrupted", EXIT_INTERRUPTED)
        except _Terminated:
            return _fail("terminated", EXIT_TERMINATED)
        except BrokenPipeError:
            # the reader of our output went away (e.g. `| head`): not an error of ours
            sys.stderr.close()
            return 0
        except OSError as error:  # the system refused a file: full disk, no permission, ...
            where = f"{error.filename}: " if error.filename else ""
            return _fail(f"error: {where}{error.strerror or error}", EXIT_INPUT)


if __name__ == "__main__":
    sys.exit(main())
