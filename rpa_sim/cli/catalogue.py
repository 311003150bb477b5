"""``scenarios`` and ``policies``: the ones bundled with rpa-sim (and files of the user's own), each with what it
is in one line and where it comes from."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rpa_sim.cli.options import format_arguments
from rpa_sim.cli.output import csv_text, json_text, print_result

if TYPE_CHECKING:
    from rpa_sim.bundled import Kind

__all__ = ["COMMANDS", "add_parsers", "first_sentence"]

#: A listing's columns, in every format: the name, where it comes from ("bundled" or the path given), and what
#: it is (its description's first sentence); the description goes last, where a narrow terminal wraps it.
COLUMNS = ("name", "source", "description")


def add_parsers(commands: Any) -> None:
    """The parsers of ``scenarios`` and ``policies``, added to ``commands``."""
    for plural, use in (("scenarios", "run, report, dashboard, staff and watch --scenario"),
                        ("policies", "--policy and a scenario's policies:")):
        listing = commands.add_parser(plural, help=f"the bundled {plural}, each in one line, and where it comes from "
                                                   f"(what {use} take by name)")
        listing.add_argument("files", nargs="*", metavar="FILE",
                             help="files of your own (YAML), listed after the bundled ones, each read and checked as "
                                  "the commands read it (default: none)")
        format_arguments(listing, what=f"the {plural}")


def first_sentence(text: str) -> str:
    """What a description says in one line: its first sentence, its spaces and line ends made one space.

    >>> first_sentence("Which policy?  1,000 receipts\\n(KIEval 0.855), five policies."), first_sentence("")
    ('Which policy?', '')
    >>> first_sentence("Review below τ within a 25% capacity, and audit 2% of the rest")
    'Review below τ within a 25% capacity, and audit 2% of the rest'
    """
    text = " ".join(text.split())
    found = re.match(r"(.+?[.?!])(?=\s|$)", text)
    return text if found is None else found.group(1)


def _rows(kind: Kind, files: list[str]) -> list[dict[str, str]]:
    """Each bundled file of ``kind``, then each file given: name, source, description (read and checked as the
    commands read them: a file that is not one is bad input, named)."""
    from rpa_sim.bundled import bundled_names, is_path  # noqa: PLC0415

    if kind == "scenario":
        from rpa_sim.study.scenario import load_scenario  # noqa: PLC0415

        def load(written: str) -> tuple[str, str]:
            scenario, _ = load_scenario(written)
            return scenario.name, scenario.description
    else:
        from rpa_sim.route.policies import load_policy  # noqa: PLC0415

        def load(written: str) -> tuple[str, str]:
            policy = load_policy(written)
            return policy.name, policy.description

    rows = []
    for written, source in [*((name, "bundled") for name in bundled_names(kind)), *((f, f) for f in files)]:
        # a file given is a file, whatever it is called: './' keeps a bare file name from being a bundled name
        name, description = load(written if source == "bundled" or is_path(written) else f"./{written}")
        rows.append({"name": name, "source": source, "description": first_sentence(description)})
    return rows


def _table(rows: list[dict[str, str]]) -> str:
    widths = {column: max(len(column), *(len(row[column] or "-") for row in rows)) for column in COLUMNS}
    lines = ["  ".join(column.ljust(widths[column]) for column in COLUMNS).rstrip(),
             "  ".join("-" * widths[column] for column in COLUMNS)]
    lines += ["  ".join((row[column] or "-").ljust(widths[column]) for column in COLUMNS).rstrip() for row in rows]
    return "\n".join(lines)


def _listing(kind: Kind, plural: str) -> Callable[[argparse.Namespace], int]:
    def listing(args: argparse.Namespace) -> int:
        rows = _rows(kind, args.files)
        print_result(args.format, {"table": lambda: _table(rows), "csv": lambda: csv_text(rows),
                                   "json": lambda: json_text(rows)})
        return 0

    listing.__doc__ = f"``{plural} [FILE ...]``: the bundled {plural} and the files given, one a line."
    return listing


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"scenarios": _listing("scenario", "scenarios"),
                                                             "policies": _listing("policy", "policies")}
