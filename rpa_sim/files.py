"""Writing output files atomically: a temporary file beside the target, then a rename.

An interrupted run leaves the target as it was; gzip output carries no file
name and a zero time in its header, so equal content gives equal bytes.
Missing parent folders are created (and removed again when the write fails);
a target that is a folder, or a parent that is a file, is an
:class:`~rpa_sim.errors.InputError`; a system error while writing is an
:class:`OSError` that names the target, never the hidden temporary file.

The hidden temporary file, ``.NAME.<pid>.<random>.tmp``, names the process
that writes it: one that a killed process left (SIGKILL, the OOM killer,
a power cut) is removed by the next write into the same folder
(:func:`remove_abandoned`).

Examples
--------
>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> target = Path(tmp.name) / "new" / "folder" / "out.txt"
>>> atomic_write_text(target, "hello\\n")
>>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
('hello\\n', ['out.txt'])
>>> check_output(target.parent)
Traceback (most recent call last):
...
rpa_sim.errors.InputError: ...folder: is a folder, not a file
>>> tmp.cleanup()
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from rpa_sim.errors import InputError
from rpa_sim.workers import process_running

__all__ = ["atomic_write_text", "atomic_write_bytes", "atomic_output", "check_output", "check_output_folder",
           "remove_abandoned"]

# The hidden temporary file of an atomic write, as _temporary names it.
_TEMPORARY = re.compile(r"\..+\.(?P<owner>[1-9][0-9]*)\.[0-9a-f]{12}\.tmp")
# The folders that remove_abandoned looked through, with the pattern it looked for, in this process.
_LOOKED: set[tuple[str, str]] = set()


def _temporary(path: Path) -> Path:
    """``.NAME.<pid>.<random>.tmp`` beside ``path``: hidden, unique, and telling which process owns it."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")


def remove_abandoned(folder: Path, pattern: re.Pattern[str]) -> None:
    """Remove the files and folders in ``folder`` that a process left when it was killed.

    They are the entries whose name ``pattern`` matches whole, its group
    ``owner`` the id of a process that no longer runs
    (:func:`rpa_sim.workers.process_running`), and that belong to this
    user. An entry of a running process is never touched, nor one whose
    owner's id the system gave to another process since (it is removed once
    that one ends too). Done once per folder and pattern in a process: a
    process that writes many files into a folder looks through it once.
    Entries that cannot be removed are left as they are.

    Examples
    --------
    >>> import tempfile
    >>> tmp = Path(tempfile.mkdtemp())
    >>> mine = tmp / f".out.txt.{os.getpid()}.0123456789ab.tmp"
    >>> _ = mine.write_text("being written")
    >>> remove_abandoned(tmp, _TEMPORARY)
    >>> mine.exists()
    True
    >>> shutil.rmtree(tmp)
    """
    key = (str(folder.absolute()), pattern.pattern)
    if key in _LOOKED:
        return
    _LOOKED.add(key)
    try:
        entries = list(os.scandir(folder))
    except OSError:  # no such folder yet, or not readable: nothing of ours in it
        return
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or process_running(int(match["owner"])):
            continue
        with contextlib.suppress(OSError):
            if hasattr(os, "getuid") and entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (the current folder for a relative path)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def _check_ancestors(path: Path) -> None:
    existing = _nearest_existing(path.parent)
    if not existing.is_dir():
        raise InputError(f"cannot be created: {existing} is a file, not a folder", path=str(path))
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"cannot be written: no permission to write in {existing}", path=str(path))


def check_output(path: str | os.PathLike[str]) -> Path:
    """Check that a file can be written at ``path`` before any long work is done.

    Nothing is created: the parent folders are made when the file is written.

    Parameters
    ----------
    path : path-like
        The output file.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputError
        When ``path`` is a folder or not a regular file, when one of its
        parents is a file, or when the nearest existing folder is not writable.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder, not a file", path=str(path))
    if path.exists() and not path.is_file():
        raise InputError("is not a regular file", path=str(path))
    _check_ancestors(path)
    return path


def check_output_folder(path: str | os.PathLike[str]) -> Path:
    """Check that files can be written into the folder ``path`` (made when missing) before any long work.

    Raises
    ------
    InputError
        When ``path`` exists and is not a folder, when one of its parents is a
        file, or when the nearest existing folder is not writable.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError("is a file, not a folder", path=str(path))
    if path.is_dir():
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError("cannot be written: permission denied", path=str(path))
        return path
    _check_ancestors(path)
    return path


def _make_parents(path: Path) -> list[Path]:
    """Create the missing parent folders of ``path``; the ones created, deepest last."""
    created = []
    for folder in reversed(path.parents):
        if not folder.exists():
            folder.mkdir()
            created.append(folder)
    return created


def _remove(created: list[Path]) -> None:
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _naming_target(error: OSError, temporary: Path, path: Path) -> OSError:
    """The same system error, about ``path`` when it was about the temporary file or no file."""
    if error.filename in (None, str(temporary)):
        return type(error)(error.errno, error.strerror, str(path))
    return error


@contextlib.contextmanager
def atomic_output(path: Path, *, compress: bool | None = None) -> Iterator[IO[bytes]]:
    """A binary stream into ``path``, renamed into place at the end.

    ``compress`` (gzip) defaults to whether the name ends in ``.gz``.
    """
    path = check_output(path)
    compress = path.name.endswith(".gz") if compress is None else compress
    remove_abandoned(path.parent, _TEMPORARY)
    temporary = _temporary(path)
    created: list[Path] = []
    try:
        created = _make_parents(path)
        # "x" mode rather than mkstemp: the file gets the usual umask permissions.
        with open(temporary, "xb") as handle:
            if compress:
                with gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=6) as out:
                    yield out
            else:
                yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        _remove(created)
        if isinstance(error, OSError) and not isinstance(error, BrokenPipeError):
            raise _naming_target(error, temporary, path) from None
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (never compressed, whatever the name)."""
    with atomic_output(Path(path), compress=False) as out:
        out.write(data)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, as UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))
