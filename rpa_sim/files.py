"""Writing output files atomically: a temporary file beside the target, then a rename.

An interrupted run leaves the target as it was; gzip output carries no file
name and a zero time in its header, so equal content gives equal bytes.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_write_text", "atomic_output"]


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    temporary = _temporary(path)
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_output(path: Path) -> Iterator[IO[bytes]]:
    """A binary stream into ``path`` (gzip-compressed when it ends in ``.gz``), renamed into place at the end."""
    temporary = _temporary(path)
    try:
        # "x" mode rather than mkstemp: the file gets the usual umask permissions.
        with open(temporary, "xb") as handle:
            if path.name.endswith(".gz"):
                with gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=6) as out:
                    yield out
            else:
                yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
