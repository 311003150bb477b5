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


TAB_HEADER = ("predicted non-group blocks whose first line, discarded as the official reader discards it, holds a "
              "key<TAB>value (a file written without the header line?)")


def test_a_prediction_whose_only_values_sat_on_a_header_line_is_an_error(capsys, tmp_path):
    """A non-group block's first line is discarded, as the official reader does; a file written without that
    line loses its first value, counted, and a prediction left empty so is an error, never predicting nothing."""
    csv = shared_path("data", "kieval_qwen72b_cord", "csv")
    for side in ("gt", "pred"):
        (tmp_path / "src" / side).mkdir(parents=True)
        shutil.copy(csv / side / "44.csv", tmp_path / "src" / side / "44.csv")
    shutil.copy(csv / "gt" / "44.csv", tmp_path / "src" / "gt" / "45.csv")
    pred = tmp_path / "src" / "pred"
    (pred / "45.csv").write_text("total.total_price\t45,000\n")
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", "kieval-csv", tmp_path / "src", "--out", out)
    assert status == 1 and err == (f"rpa-sim: error: {pred / '45.csv'}: id 45: none of its values could be mapped (1 "
                                   f"{TAB_HEADER}): an empty record would read as a document where the service found "
                                   "nothing\n")
    status, _, err = run_cli(capsys, "import", "kieval-csv", tmp_path / "src", "--skip-invalid", "--out", out)
    assert status == 0 and "wrote 1 records" in err and "skipped (--skip-invalid): 1" in err
    # a value on the first line beside others: counted, the others read; a header of its own: nothing counted
    (pred / "45.csv").write_text("total.total_price\t45,000\ntotal.cashprice\t50,000\n\n#header\nstore\tACME\n")
    status, _, err = run_cli(capsys, "import", "kieval-csv", tmp_path / "src", "--out", out)
    assert status == 0 and f"not mapped: 1 {TAB_HEADER}" in err
    record = json.loads(out.read_text().splitlines()[1])
    assert [(e["key"], e["value"]) for e in record["prediction"]["entities"]] == [("total.cashprice", "50,000"),
                                                                               ("store", "ACME")]
