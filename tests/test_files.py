"""Atomic outputs (rpa_sim.common.files): nothing half-written, errors about the target and not its temporary file."""

from __future__ import annotations

import errno
import gzip

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.common.files import atomic_output, atomic_write_bytes, atomic_write_text, check_output, check_output_folder


def everything(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_write_that_fails_leaves_neither_file_nor_new_folders(tmp_path):
    target = tmp_path / "a" / "b" / "out.jsonl.gz"
    with pytest.raises(KeyboardInterrupt), atomic_output(target) as out:
        out.write(b"half")
        assert everything(tmp_path) == ["a", "a/b", f"a/b/{next((tmp_path / 'a' / 'b').iterdir()).name}"]
        raise KeyboardInterrupt
    assert everything(tmp_path) == []


def test_a_failed_write_keeps_the_previous_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("before")
    with pytest.raises(RuntimeError), atomic_output(target) as out:
        out.write(b"after")
        raise RuntimeError("stop")
    assert everything(tmp_path) == ["out.txt"] and target.read_text() == "before"


def test_gzip_by_name_unless_told(tmp_path):
    atomic_write_text(tmp_path / "a.txt.gz", "text\n")
    atomic_write_bytes(tmp_path / "b.png.gz", b"\x89PNG")
    assert (tmp_path / "a.txt.gz").read_bytes() == b"text\n"  # text files are never compressed
    assert (tmp_path / "b.png.gz").read_bytes() == b"\x89PNG"
    with atomic_output(tmp_path / "c.jsonl.gz") as out:
        out.write(b"{}\n")
    assert gzip.decompress((tmp_path / "c.jsonl.gz").read_bytes()) == b"{}\n"


def test_a_system_error_names_the_target(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(OSError) as raised, atomic_output(target):
        raise OSError(errno.ENOSPC, "No space left on device")
    assert (raised.value.errno, raised.value.filename) == (errno.ENOSPC, str(target))
    assert everything(tmp_path) == []


def test_checks_before_the_work(tmp_path):
    (tmp_path / "file").write_text("")
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match=r"folder: is a folder, not a file$"):
        check_output(tmp_path / "folder")
    with pytest.raises(InputError, match=r"file: is a file, not a folder$"):
        check_output_folder(tmp_path / "file")
    with pytest.raises(InputError, match=r"x\.csv: cannot be created: .*file is a file, not a folder$"):
        check_output(tmp_path / "file" / "sub" / "x.csv")
    assert check_output(tmp_path / "new" / "x.csv") == tmp_path / "new" / "x.csv"
    assert check_output_folder(tmp_path / "new" / "dir") == tmp_path / "new" / "dir"
    assert everything(tmp_path) == ["file", "folder"]  # checking creates nothing
