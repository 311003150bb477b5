"""What the tests of DATA as shards share: shards written from lines, and the outputs compared across DATA."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.conftest import run_cli

SWEEP = ("--policy", "confidence", "--thresholds", "linspace:0:1:11")
CERTIFY = ("--max-error", "0.2", "--delta", "0.1")


def write_shards(folder: Path, lines: list[str], sizes: list[int], *, gzipped: tuple[int, ...] = ()) -> list[Path]:
    """``lines`` cut into consecutive shards of ``sizes`` lines, named so that name order is their order."""
    folder.mkdir(parents=True, exist_ok=True)
    paths, start = [], 0
    for index, size in enumerate(sizes):
        text = "".join(line + "\n" for line in lines[start:start + size]).encode()
        start += size
        if index in gzipped:
            path = folder / f"shard-{index:02d}.jsonl.gz"
            path.write_bytes(gzip.compress(text, mtime=0))
        else:
            path = folder / f"shard-{index:02d}.jsonl"
            path.write_bytes(text)
        paths.append(path)
    assert start == len(lines)
    return paths


def outputs(capsys: pytest.CaptureFixture[str], data: Path | str, *options: str) -> dict[str, str]:
    """The JSON standard output of score, sweep and certify on DATA."""
    result = {}
    for command, extra in (("score", ()), ("sweep", SWEEP), ("certify", CERTIFY)):
        status, out, err = run_cli(capsys, command, data, *extra, "--json", *options)
        assert (status, err) == (0, ""), (command, err)
        result[command] = out
    return result
