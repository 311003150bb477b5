"""import kieval-csv on file names that read as digits but are not numbers Python converts (../shared's CSV files)."""

from __future__ import annotations

import json
import shutil

from tests.conftest import run_cli, shared_path


def test_file_names_of_any_digits_are_ordered_without_a_traceback(capsys, tmp_path):
    """``².csv`` passes ``str.isdigit`` and breaks ``int``; so would a stem of thousands of digits. Numbered files
    come in numeric order, the others after them by name."""
    csv = shared_path("data", "kieval_qwen72b_cord", "csv")
    long_number = "9" * 250  # past int()'s 4,300 digits is past a file name's 255 bytes: this is the longest
    stems = ["10", "²", "2", long_number, "receipt"]
    for side in ("gt", "pred"):
        (tmp_path / "src" / side).mkdir(parents=True)
        for stem in stems:
            shutil.copy(csv / side / "44.csv", tmp_path / "src" / side / f"{stem}.csv")
    status, _, err = run_cli(capsys, "import", "kieval-csv", tmp_path / "src", "--out", tmp_path / "out.jsonl")
    assert status == 0, err
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [record["id"] for record in records] == ["2", "10", long_number, "receipt", "²"]
    assert len({json.dumps(record["prediction"]) for record in records}) == 1
