"""Messages on standard error stay one line whatever the data holds: library warnings, notes, ``wrote FILE``."""

from __future__ import annotations

import json
import warnings

from rpa_sim.cli import entry
from tests.conftest import run_cli

HOSTILE = "evil\n\x1b[2Jname"
ESCAPED = "evil\\n\\x1b[2Jname"


def test_a_warning_raised_inside_a_command_is_one_line_without_a_path(capsys, monkeypatch, tmp_path):
    def command(args):
        warnings.warn("axes sizes collapsed\nto zero", UserWarning, stacklevel=1)
        warnings.warn("axes sizes collapsed\nto zero", UserWarning, stacklevel=1)  # said once
        warnings.warn("np.foo is deprecated", DeprecationWarning, stacklevel=1)  # meant for developers
        warnings.warn("a default will change", FutureWarning, stacklevel=1)
        return 0

    monkeypatch.setitem(entry.COMMANDS, "score", command)
    status, out, err = run_cli(capsys, "score", tmp_path / "records.jsonl")
    assert (status, out) == (0, "")
    assert err == "rpa-sim: warning: axes sizes collapsed\\nto zero\n"

    # a developer's warning that rpa-sim's code causes (attributed to a module of rpa_sim) is said, not silenced:
    # ours to fix
    ours: dict = {"__name__": "rpa_sim.cli.example"}
    exec("import warnings\ndef command(args):\n    warnings.warn('pandas.foo is deprecated', DeprecationWarning)\n"
         "    return 0\n", ours)
    monkeypatch.setitem(entry.COMMANDS, "score", ours["command"])
    status, _, err = run_cli(capsys, "score", tmp_path / "records.jsonl")
    assert (status, err) == (0, "rpa-sim: warning: pandas.foo is deprecated\n")
    # the warning filters of the caller are left as they were
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("after", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["after"]


def test_import_notes_and_the_wrote_line_are_escaped(capsys, tmp_path):
    """A service's field name, a Label Studio result type and an output path holding a line break and an escape
    code are printed escaped: each message is one line."""
    export = tmp_path / "export.json"
    export.write_text(json.dumps([{"id": 1, "predictions": [{"score": 0.5, "result": [
        {"id": "a", "type": "textarea", "from_name": "total", "value": {"text": ["9.50"]}},
        {"id": "b", "type": HOSTILE, "from_name": "x", "value": {}}]}]}]))
    out = tmp_path / f"{HOSTILE}.jsonl"
    status, _, err = run_cli(capsys, "import", "label-studio", export, "--out", out)
    assert status == 0, err
    assert "\x1b" not in err and f"{ESCAPED} results (type not supported)" in err
    assert f"wrote 1 records to {tmp_path}/{ESCAPED}.jsonl\n" in err
    assert all(line.startswith(("wrote ", "note: ", "not mapped: ")) for line in err.splitlines())

    response = tmp_path / "mindee.json"
    response.write_text(json.dumps({"inference": {"result": {"fields": {
        HOSTILE: {"value": "1", "confidence": "High"}}}}}))
    fields = tmp_path / "fields.yaml"
    fields.write_text('"other\\n\\e[31m": total\n')
    status, _, err = run_cli(capsys, "import", "mindee", response, "--fields", fields, "--out", tmp_path / "m.jsonl")
    assert status == 0, err
    assert "\x1b" not in err and ESCAPED in err and "other\\n\\x1b[31m" in err
    assert all(line.startswith(("wrote ", "note: ", "not mapped: ")) for line in err.splitlines())


def test_a_progress_bar_shows_a_name_as_plain_escaped_text():
    """A stage named after a file (``reading NAME``) on a terminal: no escape code of the name, no Rich markup."""
    import io

    from rpa_sim.common.progress import reporting, stage

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    with reporting(stream=screen), stage("reading [bold]x\x1b]0;title\x07.jsonl", total=2) as advance:
        advance(2)
    shown = screen.getvalue()
    assert "\x1b]0;title" not in shown and "\\x1b]0;title\\x07" in shown and "[bold]x" in shown
