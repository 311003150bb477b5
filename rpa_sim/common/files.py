"""Writing output files atomically: a temporary file beside the target, then a rename.

An interrupted run leaves the target as it was; gzip output carries no file
name and a zero time in its header, so equal content gives equal bytes.
Missing parent folders are created (and removed again when the write fails);
a target that is a folder, or a parent that is a file, is an
:class:`~rpa_sim.common.errors.InputError`; a system error while writing is an
:class:`OSError` that names the target, never the hidden temporary file.

Several files that belong together (a run's ``curves.csv`` and
``summary.json``, a report and its PNG files, a folder of partitions) are
written all or none (:func:`all_or_nothing`, :func:`atomic_write_files`), and
an output is never one of the command's inputs
(:func:`refuse_overwriting_inputs`).

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
rpa_sim.common.errors.InputError: ...folder: is a folder, not a file
>>> [path.name for path in atomic_write_files({target: b"bye\\n", target.parent / "also.txt": b"too\\n"})]
['out.txt', 'also.txt']
>>> sorted(p.name for p in target.parent.iterdir()), target.read_text()
(['also.txt', 'out.txt'], 'bye\\n')
>>> refuse_overwriting_inputs([("--out", target)], [("DATA", target)])
Traceback (most recent call last):
...
rpa_sim.common.files.OutputIsInputError: --out ...out.txt is DATA ...out.txt: an output never replaces an input
>>> tmp.cleanup()
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from io import BufferedIOBase
from pathlib import Path

from rpa_sim.common.errors import InputError
from rpa_sim.common.workers import process_running

__all__ = ["atomic_write_text", "atomic_write_bytes", "atomic_output", "check_output", "check_output_folder",
           "all_or_nothing", "atomic_write_files", "OutputIsInputError", "refuse_overwriting_inputs",
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
    (:func:`rpa_sim.common.workers.process_running`), and that belong to this
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
def atomic_output(path: Path, *, compress: bool | None = None) -> Iterator[BufferedIOBase]:
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


# --------------------------------------------------------------------------- several files, all or none


def _aside(path: Path) -> Path:
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.old")


def _set_aside(target: Path) -> Path | None:
    """Keep what ``target`` holds under a hidden name beside it, for a roll-back (None when it is absent).

    A file gets a second hard link, so that it stays in place until the new
    file replaces it; a folder, or a file on a file system without hard
    links, is renamed.
    """
    if not os.path.lexists(target):
        return None
    aside = _aside(target)
    if not target.is_dir() or target.is_symlink():
        with contextlib.suppress(OSError, NotImplementedError):
            os.link(target, aside, follow_symlinks=False)
            return aside
    os.rename(target, aside)
    return aside


def _discard(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _roll_back(targets: Sequence[Path], asides: Sequence[Path | None], renamed: int) -> None:
    """Give each target what it held before: the first ``renamed`` lose their new content, the asides come back."""
    for index in reversed(range(len(asides))):
        target, aside = targets[index], asides[index]
        if index < renamed:
            _discard(target)
        if aside is not None:
            with contextlib.suppress(OSError):
                os.replace(aside, target)
                # renaming a hard link over the same file does nothing, so the aside may still be there
                aside.unlink(missing_ok=True)


def _naming_targets(error: OSError, staged: Sequence[Path], targets: Sequence[Path]) -> OSError:
    """The same system error, about a target where it was about its staged file or a file in its staged folder."""

    def named(name: object) -> object:
        if isinstance(name, str):
            for stage, target in zip(staged, targets):
                if Path(name).is_relative_to(stage):
                    return str(target / Path(name).relative_to(stage))
        return name

    filename, filename2 = named(error.filename), named(error.filename2)
    if (filename, filename2) == (error.filename, error.filename2):
        return error
    return type(error)(error.errno, error.strerror, filename, None, filename2)


@contextlib.contextmanager
def all_or_nothing(targets: Sequence[str | os.PathLike[str]]) -> Iterator[list[Path]]:
    """Write several outputs all or none: each is staged beside its target, then all are renamed into place.

    The body writes each staged path (a file, or a folder it makes). When it
    ends without an error, each target is replaced by its staged path (a
    folder whole). When anything fails, in the body or while renaming, the
    targets already renamed get their previous content back, every staged
    path is removed, and so are the folders made for the targets: each target
    holds what it held before (or stays absent). A system error names the
    target, never a staged path.

    Parameters
    ----------
    targets : sequence of path-like
        The files or folders to write; missing parent folders are made.

    Yields
    ------
    list of Path
        The staged path of each target, in the same order; none exists yet.
    """
    paths = [Path(target) for target in targets]
    staged = [_temporary(path) for path in paths]
    created: list[Path] = []
    asides: list[Path | None] = []
    renamed = 0
    try:
        for path in paths:
            created += _make_parents(path)
        yield staged
        for stage, path in zip(staged, paths):
            asides.append(_set_aside(path))
            os.replace(stage, path)
            renamed += 1
    except BaseException as error:
        _roll_back(paths, asides, renamed)
        for stage in staged:
            _discard(stage)
        _remove(created)
        if isinstance(error, OSError) and not isinstance(error, BrokenPipeError):
            raise _naming_targets(error, staged, paths) from None
        raise
    for aside in asides:
        if aside is not None:
            _discard(aside)


def _write_file(path: Path, data: bytes) -> None:
    # "x" mode rather than mkstemp: the file gets the usual umask permissions.
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def atomic_write_files(contents: Mapping[str | os.PathLike[str], bytes]) -> list[Path]:
    """Write each file of ``contents`` (its path to its bytes, never compressed), all or none (:func:`all_or_nothing`).

    Returns
    -------
    list of Path
        The files written, in the order given.

    Raises
    ------
    InputError
        As :func:`check_output` says, for any of the files, before anything is written.
    """
    targets = [check_output(path) for path in contents]
    with all_or_nothing(targets) as staged:
        for stage, target, data in zip(staged, targets, contents.values()):
            try:
                _write_file(stage, data)
            except OSError as error:
                raise _naming_target(error, stage, target) from None
    return targets


# --------------------------------------------------------------------------- outputs and inputs


class OutputIsInputError(ValueError):
    """An output that is one of the command's inputs: bad usage, found before any work is done."""


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The device and inode of the file at ``path``, which its hard links and symlinks share; None when absent."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def _files_in(folder: str | os.PathLike[str]) -> Iterator[Path]:
    for root, _, names in os.walk(folder):
        for name in names:
            yield Path(root, name)


def refuse_overwriting_inputs(outputs: Iterable[tuple[str, str | os.PathLike[str]]],
                              inputs: Iterable[tuple[str, str | os.PathLike[str]]]) -> None:
    """Refuse, before any work, an output that is the same file as an input: hard links and symlinks count.

    Parameters
    ----------
    outputs : iterable of (label, path)
        What a command writes, each with how the user named it (``--out``).
        A path written with a trailing separator (``tables/``) is a folder
        replaced whole: none of the files in it may be an input.
    inputs : iterable of (label, path)
        What the command reads (``DATA``, ``--policy``); a folder stands for
        every file in it and its subfolders. Read only when an output exists
        already, so it may be a generator that finds the files lazily.

    Raises
    ------
    OutputIsInputError
        Naming both, e.g. ``--out p.parquet is DATA p.parquet: an output never
        replaces an input``.
    """
    written: dict[tuple[int, int] | None, str] = {}
    for label, path in outputs:
        text = os.fspath(path)
        if text.endswith(("/", os.sep)) and os.path.isdir(text):
            for file in _files_in(text):
                written.setdefault(_identity(file), f"{label} {text} holds")
        else:
            written.setdefault(_identity(text), f"{label} {text} is")
    written.pop(None, None)
    if not written:
        return
    for label, path in inputs:
        for file in _files_in(path) if os.path.isdir(path) else (Path(path),):
            clash = written.get(_identity(file))
            if clash is not None:
                raise OutputIsInputError(f"{clash} {label} {file}: an output never replaces an input")
