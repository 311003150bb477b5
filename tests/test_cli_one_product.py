"""The command line as one product, the rest (issue 29, item 8): one shape per option across every command
(metavars, types, defaults, wording), usages that tell the truth, one threshold range, a folder for --out as
bad usage, generate --n 0 refused, a missing scenario file said so, the bundled scenarios and policies
listed, run's text fitted to the terminal, words instead of internal names, one way to write a team."""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpa_sim.cli import options
from rpa_sim.cli.parser import build_parser
from tests.conftest import run_cli as run


def commands(parser: argparse.ArgumentParser | None = None, words: tuple[str, ...] = ()) -> Iterator[
        tuple[str, argparse.ArgumentParser]]:
    """Every command's words and parser, the formats of import and export-policy included."""
    parser = parser or build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                nested = any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)
                if not nested:
                    yield " ".join((*words, name)), sub
                yield from commands(sub, (*words, name))


def shown_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options and arguments a command's help shows (not --help, nor a deprecated spelling)."""
    return [action for action in parser._actions
            if action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction)]


def final_parenthesis(text: str) -> tuple[str, str]:
    """A help text without its closing parenthesis (what is required, the default), and that parenthesis."""
    found = re.search(r" \(([^()]*(?:\([^()]*\)[^()]*)*)\)$", text)
    return (text, "") if found is None else (text[:found.start()], found.group(1))


def stated_default(text: str) -> str:
    """What a help text says of the option's default (``none`` of ``default: none, the confidence itself``),
    or ``required``."""
    closing = final_parenthesis(text)[1]
    if closing.endswith("required") and "default: " not in closing:
        return "required"
    return re.split(r"[,;]", closing.partition("default: ")[2])[0]


ALL = list(commands())


def test_the_walk_finds_every_command():
    names = {name for name, _ in ALL}
    assert {"run", "sweep", "replay", "staff", "watch", "import cord", "export-policy a2i", "scenarios",
            "policies"} <= names
    assert len(names) >= 30


def _command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return dict(next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction)).choices)


def _described(parser: argparse.ArgumentParser) -> tuple[str, list[tuple]]:
    return parser.format_help(), [(action.option_strings, action.dest, action.default, action.required, action.nargs,
                                   action.choices if isinstance(action.choices, (list, tuple)) else None,
                                   getattr(action.type, "__name__", None)) for action in parser._actions]


def test_the_parser_built_for_one_command_parses_it_as_the_whole_parser_does():
    # the command run gets its options alone (the others' take longer to add than a table's score takes)
    whole = build_parser()
    for name in _command_parsers(whole):
        only = build_parser(only=name)
        assert only.format_help() == whole.format_help()
        parser = _command_parsers(only)[name]
        mine = {name: parser, **dict(commands(parser, (name,)))}
        wanted = {words: parser for words, parser in ALL if words.split()[0] == name}
        assert wanted and {words: _described(mine[words]) for words in wanted} == {
            words: _described(parser) for words, parser in wanted.items()}
    assert build_parser(only="scroe").format_help() == whole.format_help()


def test_a_mistyped_command_lists_every_command(capsys):
    status, out, err = run(capsys, "scroe", "data.jsonl")
    assert status == 2 and out == ""
    listed = set(re.findall(r"[a-z][a-z-]*", err.split("choose from ")[1]))
    assert {"run", "score", "watch", "signals", "import", "export-policy", "scenarios", "policies"} <= listed


# --------------------------------------------------------------------------- metavars: one convention


#: Metavars that name a shape, whatever the command (docs/cli.md, "Option values"); other names say what the
#: value is (KEY, TYPE, ADDRESS, ...) and are never one letter, nor a file format.
_FILE_METAVARS = {"FILE", "DIR", "FILE|DIR/", "DATA"}


def _probe(kind, text: str):
    try:
        return kind(text)
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return None


def expected_metavar(action: argparse.Action) -> str | None:
    """The metavar the convention gives an option by the values its type takes; None when it names the value."""
    kind = action.type
    if kind is options.threshold:
        return "T"
    if kind is None or kind.__name__ in ("Path", "output_file", "output_folder", "table_output"):
        return None
    if isinstance(_probe(kind, "1"), int) and not isinstance(_probe(kind, "1"), bool):
        return "N"  # a whole number: a count or a seed
    if _probe(kind, "0.5") == 0.5 and _probe(kind, "1.5") is None:
        return "SHARE"  # a number in [0, 1], its ends or not
    return None


def test_metavars_follow_one_convention():
    wrong = []
    for name, parser in ALL:
        for action in shown_actions(parser):
            if not action.option_strings or action.nargs == 0:
                continue
            metavar, wanted = action.metavar, expected_metavar(action)
            option = f"{name} {action.option_strings[0]} {metavar}"
            if wanted is not None and metavar != wanted:
                wrong.append(f"{option}: expected {wanted}")
            if action.type is not None and getattr(action.type, "__name__", "") in (
                    "Path", "output_file", "output_folder", "table_output") and metavar not in _FILE_METAVARS:
                wrong.append(f"{option}: a path is FILE or DIR")
            if action.choices is None and wanted is None and metavar is not None and (
                    (len(metavar) == 1 and metavar not in ("N", "T")) or metavar in ("YAML", "JSON", "CSV", "MAP")):
                wrong.append(f"{option}: a one-letter or format name")
    assert wrong == []


def test_positionals_are_named_for_what_they_are():
    for name, parser in ALL:
        for action in shown_actions(parser):
            if not action.option_strings:
                assert action.choices is not None or re.fullmatch(r"[A-Z]+(\|[A-Z]+)?", action.metavar or ""), name


# --------------------------------------------------------------------------- one option, one shape


#: Options whose shape differs on purpose, and why (docs/cli.md, "Option values").
SHAPE_EXCEPTIONS = {
    ("import cord", "--predictions"): "a folder of model outputs, where the other formats take a file",
    ("evaluate", "--out"): "a table file, or a folder of tables named with a trailing /",
    ("import azure-di", "--value"): "each service has its own strings",
    ("import google-docai", "--value"): "each service has its own strings",
}
#: Options whose stated default differs on purpose, and why.
DEFAULT_EXCEPTIONS = {
    ("demo", "--format"): "the dashboard in a terminal",
    ("certify", "--delta"): "a certificate's risk is chosen, not defaulted; watch's is a false-alarm rate",
    ("watch", "--delta"): "a certificate's risk is chosen, not defaulted; watch's is a false-alarm rate",
    ("generate", "--workers"): "generating takes at most 4 cores",
    ("staff", "--seed"): "used with --simulate only",
}
#: Options that name a different thing on each command (the file --out writes, what --format prints), and the
#: words each says all the same (options.py).
PER_COMMAND_WORDS = {
    "--out": options.OUT_WORDS, "--out-dir": options.FOLDER_WORDS, "--format": options.FORMAT_WORDS,
    "--seed": options.SEED_WORDS, "--workers": options.WORKERS_WORDS, "--scenario": options.SCENARIO_WORDS,
    "SCENARIO": options.SCENARIO_WORDS, "--review-log": options.OUT_WORDS,
    "--skip-invalid": options.SKIP_INVALID_WORDS, "--scheduler": "evaluate on Dask",
    # an importer's own inputs: each format's
    "--predictions": "", "--fields": "YAML map of the", "--value": "which string is the value", "SRC": "",
    "DATA": "records (.jsonl or .jsonl.gz), a regular file",
}


def test_the_same_option_has_the_same_shape_default_and_words_everywhere():
    uses = defaultdict(list)
    for name, parser in ALL:
        for action in shown_actions(parser):
            uses[action.option_strings[0] if action.option_strings else action.metavar].append((name, action))
    shapes, defaults, words = [], [], []
    for option, found in uses.items():
        if len(found) < 2:
            continue
        # the value's shape: one value ('?' and repeated options too) of a type, a metavar, its choices
        shape = {(getattr(a.type, "__name__", a.type), a.metavar, 1 if a.nargs in (None, "?") else a.nargs,
                  tuple(a.choices or ())): name for name, a in found if (name, option) not in SHAPE_EXCEPTIONS}
        if len(shape) > 1:
            shapes.append(f"{option}: {shape}")
        # an option required by one command may be optional on another (--policy); when optional, its default is
        # the same, but for an option that names a different thing on each command
        stated = {stated_default(a.help): name for name, a in found if (name, option) not in DEFAULT_EXCEPTIONS}
        stated.pop("required", None)
        if len(stated) > 1 and option not in PER_COMMAND_WORDS:
            defaults.append(f"{option}: {stated}")
        if option in PER_COMMAND_WORDS:
            words += [f"{name} {option}: {a.help}" for name, a in found if PER_COMMAND_WORDS[option] not in a.help]
        else:
            wording = {final_parenthesis(a.help)[0]: name for name, a in found}
            if len(wording) > 1:
                words.append(f"{option}: {wording}")
    assert (shapes, defaults, words) == ([], [], [])


def test_the_threshold_is_one_option_everywhere(capsys):
    takers = [(name, action) for name, parser in ALL for action in parser._actions
              if "--threshold" in action.option_strings]
    assert {name for name, _ in takers} >= {"replay", "plan-audit", "export-policy a2i", "export-policy rossum"}
    assert {action.type for _, action in takers} == {options.threshold}
    for name, _ in takers:
        status, _, err = run(capsys, *name.split(), "--threshold", "-0.5")
        assert (status, err) == (2, f"rpa-sim: error: {name}: argument --threshold: expected a number >= 0 (scores "
                                    f"are in [0, 1]; above 1 reviews everything), got '-0.5' (see 'rpa-sim {name} "
                                    f"--help')\n")
        status, _, err = run(capsys, *name.split(), "--threshold", "1.5")  # accepted: it reviews everything
        assert "argument --threshold" not in err


# --------------------------------------------------------------------------- usages that tell the truth


def test_a_required_option_shows_as_required_in_the_usage():
    for name, parser in ALL:
        usage = " ".join(parser.format_usage().split())
        required = [a for a in shown_actions(parser) if a.option_strings and a.required]
        required += [a for group in parser._mutually_exclusive_groups if group.required
                     for a in group._group_actions if a.help != argparse.SUPPRESS and len(
                         [b for b in group._group_actions if b.help != argparse.SUPPRESS]) == 1]
        for action in required:
            shown = f"{action.option_strings[0]} {action.metavar}" if action.metavar else action.option_strings[0]
            assert re.search(rf"(^|[ (|]){re.escape(shown)}($|[ )|])", usage), (name, shown, usage)
            assert f"[{shown}" not in usage, (name, shown, usage)


def test_replay_out_is_required_in_usage_and_message(capsys):
    # --out is required without --days (one day of DATA); with --days the days go into --out-dir
    status, out, _ = run(capsys, "replay", "--help")
    out = " ".join(out.split())
    assert status == 0 and "--out FILE, --log FILE" not in out
    assert re.search(r"--out FILE the production log \(JSON Lines, gzip-compressed when it ends in \.gz\), written "
                     r"atomically; missing folders are created \(without --days: required\)", out)
    status, _, err = run(capsys, "replay", "d.jsonl", "--policy", "confidence", "--threshold", "0.5")
    assert (status, err) == (2, "rpa-sim: error: replay: the following arguments are required: --out (see "
                                "'rpa-sim replay --help')\n")


# --------------------------------------------------------------------------- --out: a folder is bad usage


def test_a_folder_for_any_output_file_is_bad_usage_before_anything(capsys, tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    seen = 0
    for name, parser in ALL:
        for action in parser._actions:
            if getattr(action.type, "__name__", "") not in ("output_file", "table_output"):
                continue
            option = action.option_strings[0]
            seen += 1
            status, out, err = run(capsys, *name.split(), option, folder)
            extra = " (a folder of tables is named with a trailing /)" if name == "evaluate" else ""
            assert (status, out, err) == (2, "", f"rpa-sim: error: {name}: argument {option}: '{folder}' is a "
                                                 f"folder, not a file{extra} (see 'rpa-sim {name} --help')\n")
    assert seen >= 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"] and not any(folder.iterdir())


def test_every_out_option_refuses_a_folder():
    for name, parser in ALL:
        for action in shown_actions(parser):  # run's --out is an old spelling of --out-dir
            if "--out" in action.option_strings or "--review-log" in action.option_strings:
                assert getattr(action.type, "__name__", "") in ("output_file", "table_output"), name
            if "--out-dir" in action.option_strings or "--png-dir" in action.option_strings:
                assert action.type is options.output_folder, name


def test_a_file_for_an_output_folder_is_bad_usage(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("kept")
    for argv in (["run", "receipts-demo", "--out-dir", blocker], ["report", "receipts-demo", "--out",
                                                                    tmp_path / "r.html", "--png-dir", blocker]):
        status, _, err = run(capsys, *argv)
        option = argv[-2]
        assert (status, err) == (2, f"rpa-sim: error: {argv[0]}: argument {option}: '{blocker}' is a file, not a "
                                    f"folder (see 'rpa-sim {argv[0]} --help')\n")
    assert blocker.read_text() == "kept" and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# --------------------------------------------------------------------------- generate --n 0


def test_generate_refuses_no_records(capsys, tmp_path):
    status, out, err = run(capsys, "generate", "receipts", "--n", "0", "--out", tmp_path / "r.jsonl")
    assert (status, out, err) == (2, "", "rpa-sim: error: generate: argument --n: 0 records is less than the least, "
                                         "1 (see 'rpa-sim generate --help')\n")
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- a missing file is a missing file


@pytest.mark.parametrize("argv", [["run"], ["report", "--out", "r.html"], ["staff"], ["watch", "logs/",
                                                                                     "--max-error", "0.1",
                                                                                     "--scenario"]])
@pytest.mark.parametrize("written", ["./nosuch.yaml", "nosuch.yml", "rules/nosuch"])
def test_a_scenario_written_as_a_path_that_is_not_there_is_no_such_file(capsys, tmp_path, monkeypatch, argv,
                                                                        written):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "day.jsonl").write_text("")
    argv = [*argv, written] if argv[0] == "watch" else [argv[0], written, *argv[1:]]
    status, out, err = run(capsys, *argv)
    assert (status, out, err) == (1, "", f"rpa-sim: error: {written}: no such file\n")


def test_a_policy_written_as_a_path_that_is_not_there_is_no_such_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, "export-policy", "rossum", "--policy", "./strict.yaml", "--threshold", "0.5",
                         "--out", "p.json")
    assert (status, err) == (1, "rpa-sim: error: ./strict.yaml: no such file\n")


def test_only_a_bare_name_lists_the_bundled_ones(capsys):
    status, _, err = run(capsys, "run", "receipt-demo")
    assert (status, err) == (1, "rpa-sim: error: no bundled scenario named 'receipt-demo'; did you mean "
                                "'receipts-demo'? (bundled: certified-threshold, cost-benefit, docvqa-demo, "
                                "imperfect-reviewer, live-drift, operations-day, policy-comparison, receipts-demo)\n")


# --------------------------------------------------------------------------- scenarios and policies listed


def test_scenarios_and_policies_list_the_bundled_ones(capsys, monkeypatch):
    from rpa_sim.bundled import bundled_names
    from rpa_sim.route.policies import load_policy

    monkeypatch.setenv("COLUMNS", "1000")
    for command, kind in (("scenarios", "scenario"), ("policies", "policy")):
        status, table, err = run(capsys, command)
        lines = table.splitlines()
        assert (status, err, lines[0].split()) == (0, "", ["name", "source", "description"])
        assert [line.split()[:2] for line in lines[2:]] == [[name, "bundled"] for name in bundled_names(kind)]
        status, text, _ = run(capsys, command, "--format", "csv")
        rows = list(csv.DictReader(io.StringIO(text)))
        status, text, _ = run(capsys, command, "--json")
        assert json.loads(text) == rows and [row["name"] for row in rows] == bundled_names(kind)
        assert all(row["description"] and "\n" not in row["description"] for row in rows)
    assert {row["name"]: row["description"] for row in rows}["confidence"] == load_policy("confidence").description
    status, text, _ = run(capsys, "scenarios", "--json")
    assert {row["name"]: row["description"] for row in json.loads(text)}["receipts-demo"] == (
        "Which review policy should a receipts pipeline use?")


def test_a_listing_adds_the_files_given_after_the_bundled_ones(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("strict").write_text("name: strict\ndescription: Review nearly everything.\n  Really.\n"
                              "review_if: {confidence: sweep}\n")
    Path("rules").mkdir()
    Path("rules/lax.yaml").write_text("name: lax\nreview_if: {confidence: sweep}\n")
    status, text, _ = run(capsys, "policies", "strict", "rules/lax.yaml", "--json")
    assert status == 0 and json.loads(text)[-2:] == [
        {"name": "strict", "source": "strict", "description": "Review nearly everything."},
        {"name": "lax", "source": "rules/lax.yaml", "description": ""}]
    status, table, _ = run(capsys, "policies", "rules/lax.yaml")
    assert table.splitlines()[-1] == "lax                        rules/lax.yaml  -"
    Path("bad.yaml").write_text("name: bad\nreview_if: {confidance: sweep}\n")
    for argv, message in ((["policies", "bad.yaml"], "bad.yaml: line 2: review_if.confidance: "),
                          (["scenarios", "nosuch.yaml"], "nosuch.yaml: no such file")):
        status, out, err = run(capsys, *argv)
        assert (status, out, err.count("\n")) == (1, "", 1) and err.startswith(f"rpa-sim: error: {message}")


def test_a_listing_fits_the_terminal(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    _, table, _ = run(capsys, "scenarios")
    assert max(map(len, table.splitlines())) <= 60
    monkeypatch.setenv("COLUMNS", "1000")
    _, wide, _ = run(capsys, "scenarios")
    words = [" ".join(word for line in text.splitlines() if not line.startswith("-") for word in line.split())
             for text in (table, wide)]
    assert words[0] == words[1]  # the same words, wrapped


# --------------------------------------------------------------------------- run's text at the terminal's width


WIDE_SCENARIO = ("name: wide\ndescription: " + "A scenario whose description runs on and on, " * 6 + "to the end.\n"
                 "data: {generate: receipts, n: 20, seed: 1}\npolicies: [confidence, per-field, document-escalation]\n"
                 "costs: {per_review: 0.1, per_residual_error: 1}\ntargets: [0.9, 0.95]\n")


@pytest.fixture(scope="module")
def wide_run(tmp_path_factory):
    """A small scenario's run, as text at 1,000 columns and at 80, and as CSV and JSON at 80."""
    from rpa_sim.cli.entry import main

    path = tmp_path_factory.mktemp("wide") / "wide.yaml"
    path.write_text(WIDE_SCENARIO)
    texts = {}
    with pytest.MonkeyPatch.context() as patch:
        for columns, form in (("1000", "table"), ("80", "table"), ("80", "csv"), ("1000", "csv"), ("80", "json"),
                              ("1000", "json")):
            patch.setenv("COLUMNS", columns)
            out = io.StringIO()
            patch.setattr("sys.stdout", out)
            assert main(["run", str(path), "--format", form]) == 0
            texts[columns, form] = out.getvalue()
    return texts


def test_run_fits_its_text_to_the_terminal(wide_run):
    wide, narrow = wide_run["1000", "table"], wide_run["80", "table"]
    assert max(map(len, wide.splitlines())) > 120  # the description, and the comparison with its columns
    assert max(map(len, narrow.splitlines())) <= 80
    words = [sorted(word for line in text.splitlines() if not line.startswith("-") for word in line.split())
             for text in (wide, narrow)]
    assert set(words[0]) == set(words[1])  # nothing left out (the policy column repeats in each block)
    assert ("\n\nwide: A scenario whose description runs on and on, A scenario whose description\n"
            "  runs on and on,") in narrow  # after the decision, which run prints first


def test_run_keeps_csv_and_json_whatever_the_width(wide_run):
    assert wide_run["80", "csv"] == wide_run["1000", "csv"]
    assert wide_run["80", "json"] == wide_run["1000", "json"]


def test_the_width_is_columns_else_the_terminal_else_80(monkeypatch):
    from rpa_sim.cli.output import terminal_width

    monkeypatch.setenv("COLUMNS", "132")
    assert terminal_width() == 132
    monkeypatch.setenv("COLUMNS", "12")
    assert terminal_width() == 40  # the narrowest fitted
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr("sys.__stdout__", io.StringIO())  # a pipe or a file: no terminal to ask
    assert terminal_width() == 80


_WORD = st.text(alphabet="abcdefgh.,", min_size=1, max_size=12)


@st.composite
def _tables(draw):
    """A table as the commands print them: text columns aligned left, then figures aligned right."""
    keys, figures, rows = draw(st.integers(1, 2)), draw(st.integers(1, 8)), draw(st.integers(1, 5))
    cells = [[draw(_WORD) for _ in range(keys + figures)] for _ in range(rows + 1)]
    widths = [max(len(row[column]) for row in cells) for column in range(keys + figures)]
    lines = ["  ".join(cell.ljust(width) if column < keys else cell.rjust(width)
                       for column, (cell, width) in enumerate(zip(row, widths))) for row in cells]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines, cells, keys


@given(words=st.lists(_WORD, min_size=1, max_size=40), indent=st.integers(0, 4), width=st.integers(40, 160))
def test_fitted_prose_keeps_its_words_within_the_width(words, indent, width):
    from rpa_sim.cli.output import fitted

    line = " " * indent + " ".join(words)
    out = fitted(line, width).split("\n")
    assert out == [line] if len(line) <= width else len(out) > 1
    assert all(len(part) <= width for part in out) and " ".join(out).split() == words
    assert all(part.startswith(" " * (indent + 2)) for part in out[1:])  # continuations hang under the first


@given(table=_tables(), width=st.integers(40, 160))
def test_fitted_tables_keep_every_cell_in_its_row_within_the_width(table, width):
    from rpa_sim.cli.output import fitted

    lines, cells, keys = table
    out = fitted("\n".join(lines), width).split("\n")
    if all(len(line) <= width for line in lines):
        assert out == lines
    assert all(len(line) <= width for line in out)  # no cell here is longer than 12
    blocks = [block.split("\n") for block in "\n".join(out).split("\n\n")]
    if len(blocks) == 1 and len(out) > len(lines):  # the last column wrapped, its words across a row's lines
        last = re.search(r"-+$", out[1]).start()
        found = []
        for line in out[2:]:
            if line[:last].strip():
                found.append([*line[:last].split(), line[last:].strip()])
            else:
                found[-1][-1] += " " + line.strip()
        assert out[0].split() == cells[0] and found == cells[1:]
    else:  # blocks of columns, each headed by the key columns
        rebuilt = [row[:keys] for row in cells]
        for block in blocks:
            assert len(block) == len(lines) and _is_rule(block[1])
            for index, line in enumerate([block[0], *block[2:]]):
                assert line.split()[:keys] == cells[index][:keys]
                rebuilt[index] += line.split()[keys:]
        assert rebuilt == cells


def _is_rule(line: str) -> bool:
    return set(line) <= {"-", " "}


# --------------------------------------------------------------------------- words, not internal names; one team


def test_constraints_are_named_in_words_not_field_names():
    from rpa_sim.study.decision import CONSTRAINTS
    from rpa_sim.study.told import constraint_label

    labels = [constraint_label(name) for name in CONSTRAINTS]
    assert labels == ["quality", "service level", "reviewers", "cost a day", "certified error"]
    assert not any(re.search(r"\w_\w", label) for label in labels)


def test_one_team_is_written_one_way_on_every_page():
    from rpa_sim.common.formatting import team as formatted
    from rpa_sim.operate.queue.results import Team
    from rpa_sim.study.told import team_words

    team = Team(extra_per_shift=-1, shifts=((7.0, 13.0, 4), (13.0, 19.5, 6)), count=None)
    words = "4 people 07–13 h, 6 people 13–19:30 h"
    assert team_words(team) == words  # run, the report and the dashboard (study.told)
    assert team.words == f"{words}, 1 fewer a shift than planned"  # the alternatives' notes
    assert formatted(shifts=team.shifts, count=None) == words
