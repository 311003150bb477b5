"""Reading input files safely: regular files only, and lines and whole files of bounded size.

Every file rpa-sim reads (records, production logs, YAML settings, the
files of imported formats) is opened by :func:`open_input`, which refuses a
missing file, a folder, a pipe and a device with one :class:`~rpa_sim.common.errors.InputError`,
checking with ``stat`` before opening so that a named pipe never blocks.

Files read line by line go through :func:`input_lines`: plain or gzip
(told by the first bytes), a byte-order mark at the start ignored, blank
lines skipped a block at a time but still numbered, and no line longer than
:func:`max_line_bytes` (``RPA_SIM_MAX_LINE_BYTES``, 256 MiB by default):
a longer line is an error as soon as the bound is passed, so a file without
a newline never fills the memory. Files read whole (a JSON document, a YAML
or CSV file) go through :func:`read_input`, bounded by :func:`max_file_bytes`
(``RPA_SIM_MAX_FILE_BYTES``, 1 GiB by default). ``docs/cli.md`` (Limits)
documents both.

Examples
--------
>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> path = Path(tmp.name) / "rows.jsonl"
>>> _ = path.write_bytes(codecs.BOM_UTF8 + b'{"a": 1}\\n\\n  \\n{"b": 2}')
>>> list(input_lines(path))
[(1, b'{"a": 1}'), (4, b'{"b": 2}')]
>>> open_input(Path(tmp.name))
Traceback (most recent call last):
...
rpa_sim.common.errors.InputError: ...: is a folder, not a file
>>> tmp.cleanup()
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import os
import re
import stat
import zlib
from collections.abc import Iterator
from itertools import compress
from pathlib import Path
from typing import IO, cast

from rpa_sim.common.errors import InputError

__all__ = ["MAX_LINE_VARIABLE", "MAX_FILE_VARIABLE", "max_line_bytes", "max_file_bytes", "check_limits",
           "check_input", "open_input", "input_lines", "read_input", "named_files"]

MAX_LINE_VARIABLE = "RPA_SIM_MAX_LINE_BYTES"
MAX_FILE_VARIABLE = "RPA_SIM_MAX_FILE_BYTES"
_DEFAULT_MAX_LINE = 256 << 20
# A JSON document is parsed whole, taking several times its size in memory: 1 GiB is far above any
# real document (a DUDE ground truth of every question is tens of MB) and still below a machine's memory.
_DEFAULT_MAX_FILE = 1 << 30
_UNITS = {"": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}
_SIZE = re.compile(r"\s*(\d+)\s*([kmg]ib)?\s*", re.IGNORECASE)
_NOT_REGULAR = "is not a regular file (a pipe or a device?)"
_GZIP_MAGIC = b"\x1f\x8b"
# Large enough that a long run of blank lines costs one regular-expression match a block.
_BLOCK = 1 << 17
# From this length on a line is found by memchr rather than split (about where their costs cross).
_LONG_LINE = 1 << 10
# The blank lines at a position, up to the last newline of the run: whitespace as bytes.strip() sees it.
_BLANK_RUN = re.compile(rb"[ \t\n\r\x0b\x0c]*\n")


# --------------------------------------------------------------------------- limits


def _size_setting(variable: str, default: int) -> int:
    text = os.environ.get(variable)
    if text is None:
        return default
    match = _SIZE.fullmatch(text)
    size = 0 if match is None else int(match[1]) * _UNITS[(match[2] or "").lower()]
    if size < 1:
        raise ValueError(f"{variable}: expected a positive number of bytes (e.g. {default} or "
                         f"{_format_size(default).replace(' ', '')}), got {text!r}")
    return size


def max_line_bytes() -> int:
    """The longest line read, in bytes: ``RPA_SIM_MAX_LINE_BYTES``, 256 MiB by default.

    The variable holds a positive number of bytes, optionally followed by
    ``KiB``, ``MiB`` or ``GiB`` (``1048576``, ``1MiB``).

    Raises
    ------
    ValueError
        When the variable is set to anything else (the command line's usage error).
    """
    return _size_setting(MAX_LINE_VARIABLE, _DEFAULT_MAX_LINE)


def max_file_bytes() -> int:
    """The largest file read whole, in bytes: ``RPA_SIM_MAX_FILE_BYTES``, 1 GiB by default.

    Raises
    ------
    ValueError
        When the variable is set but is not a size, as :func:`max_line_bytes` reads it.
    """
    return _size_setting(MAX_FILE_VARIABLE, _DEFAULT_MAX_FILE)


def check_limits() -> None:
    """Read both limits, so that a bad setting is refused before any work; :class:`ValueError` if bad."""
    max_line_bytes()
    max_file_bytes()


def _format_size(size: int) -> str:
    """
    >>> _format_size(256 << 20), _format_size(1 << 30), _format_size(1500)
    ('256 MiB', '1 GiB', '1500 bytes')
    """
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


# --------------------------------------------------------------------------- opening


def check_input(path: Path, *, advice: str = "save it to a file first") -> os.stat_result:
    """Refuse what :func:`open_input` refuses, without opening ``path``; its ``stat`` otherwise.

    Parameters
    ----------
    path : pathlib.Path
    advice : str
        What the message about a pipe or a device tells the user to do.

    Raises
    ------
    InputError
        ``no such file``, ``is a folder, not a file``, ``is not a regular file
        (a pipe or a device?): ADVICE`` or ``cannot be read: REASON``.
    """
    try:
        # stat before open: opening a named pipe would wait for a writer
        status = path.stat()
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot be read: {error.strerror}", path=str(path)) from None
    if stat.S_ISDIR(status.st_mode):
        raise InputError("is a folder, not a file", path=str(path))
    if not stat.S_ISREG(status.st_mode):
        raise InputError(f"{_NOT_REGULAR}: {advice}", path=str(path))
    return status


def open_input(path: Path, *, advice: str = "save it to a file first") -> IO[bytes]:
    """``path`` opened for reading bytes, when it is a regular file; see :func:`check_input` for what is refused."""
    check_input(path, advice=advice)
    try:
        return open(path, "rb")
    except FileNotFoundError:  # removed since the check
        raise InputError("no such file", path=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot be read: {error.strerror}", path=str(path)) from None


# --------------------------------------------------------------------------- reading


def read_input(path: Path) -> bytes:
    """The bytes of a regular file read whole, without a leading byte-order mark, at most :func:`max_file_bytes`.

    Raises
    ------
    InputError
        When :func:`open_input` refuses the file, or it is larger than the bound
        (``is larger than 1 GiB (RPA_SIM_MAX_FILE_BYTES)``), which is found
        from its size before it is read.
    """
    limit = max_file_bytes()
    too_large = InputError(f"is larger than {_format_size(limit)} ({MAX_FILE_VARIABLE})", path=str(path))
    with open_input(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise too_large
        try:
            # a read allocates what it asks for: the size, not the bound, and one byte more to see growth
            data = handle.read(size + 1)
            if len(data) > size:  # grown since its size was read
                data += handle.read(limit + 1 - len(data))
        except OSError as error:
            raise InputError(f"cannot be read: {error.strerror}", path=str(path)) from None
    if len(data) > limit:
        raise too_large
    return data.removeprefix(codecs.BOM_UTF8)


def _decompressing(handle: IO[bytes]) -> contextlib.AbstractContextManager[IO[bytes]]:
    if handle.peek(2)[:2] == _GZIP_MAGIC:  # type: ignore[attr-defined]
        return cast(IO[bytes], gzip.GzipFile(fileobj=handle, mode="rb"))
    return contextlib.nullcontext(handle)


def _blocks(stream: IO[bytes]) -> Iterator[bytes]:
    """The stream's bytes in blocks, without a leading byte-order mark.

    ``read1``: a gzip stream that breaks off hands over what it decompressed
    before the error, so the error comes after every complete line.
    """
    start = b""
    while len(start) < len(codecs.BOM_UTF8) and (block := stream.read1(_BLOCK)):  # type: ignore[attr-defined]
        start += block
    if start:
        yield start.removeprefix(codecs.BOM_UTF8)
    while block := stream.read1(_BLOCK):  # type: ignore[attr-defined]
        yield block


class _Splitter:
    """The lines of consecutive blocks: numbered, blank ones dropped, each held to the bound.

    A line is found by one of two loops, picked for each block by the length
    of its first line: ``find`` (``memchr``) for lines of a KiB or more, such as
    records with OCR; ``split``, ``map`` and ``compress`` for short ones, such
    as the rows of a log, where a Python step a line would cost more than
    ``split``'s copy. Either way a run of blank lines costs no Python step a
    line: one regular-expression match, or the C loops. The lines of a block
    are gathered in a list, which the caller hands on: cheaper than
    generators nested three deep.
    """

    def __init__(self, path: str, limit: int) -> None:
        self.path, self.limit = path, limit
        self.number = 0  # the lines read to their end, blank ones included
        self.head: list[bytes] = []  # the start of the current line, from earlier blocks
        self.size = 0  # its length

    def feed(self, block: bytes, out: list[tuple[int, bytes]]) -> None:
        """Append to ``out`` the lines that ``block`` ends, the one begun in earlier blocks first.

        A line over the bound raises, after the lines before it were appended.
        """
        position = 0
        if self.head:
            end = block.find(b"\n")
            self._extend(block if end < 0 else block[:end])
            if end < 0:
                return
            line = b"".join(self.head)
            self.head, self.size = [], 0
            self.number += 1
            if line.lstrip():
                out.append((self.number, line))
            position = end + 1
        position = self._skip_blank_run(block, position)
        first = block.find(b"\n", position)
        if first < 0 or first - position >= _LONG_LINE:
            self._by_find(block, position, out)
        else:
            self._by_split(block, position, out)

    def finish(self, out: list[tuple[int, bytes]]) -> None:
        """Append the last line, when the file does not end with a line end."""
        line = b"".join(self.head)
        if line.lstrip():
            out.append((self.number + 1, line))

    def _too_long(self, number: int) -> InputError:
        return InputError(f"line {number} is longer than {_format_size(self.limit)} ({MAX_LINE_VARIABLE})",
                          path=self.path)

    def _extend(self, piece: bytes) -> None:
        if piece:
            self.head.append(piece)
            self.size += len(piece)
            if self.size > self.limit:
                raise self._too_long(self.number + 1)

    def _skip_blank_run(self, block: bytes, position: int) -> int:
        blank = _BLANK_RUN.match(block, position)
        if blank is None:
            return position
        newlines = block.count(b"\n", position, blank.end())
        if blank.end() - position - newlines > self.limit:  # one of these blank lines may be too long
            for offset, line in enumerate(block[position:blank.end()].split(b"\n")):
                if len(line) > self.limit:
                    raise self._too_long(self.number + offset + 1)
        self.number += newlines
        return blank.end()

    def _by_find(self, block: bytes, position: int, out: list[tuple[int, bytes]]) -> None:
        while (end := block.find(b"\n", position)) >= 0:
            if end - position > self.limit:
                raise self._too_long(self.number + 1)
            self.number += 1
            out.append((self.number, block[position:end]))
            position = self._skip_blank_run(block, end + 1)
        self._extend(block[position:])

    def _by_split(self, block: bytes, position: int, out: list[tuple[int, bytes]]) -> None:
        lines = (block[position:] if position else block).split(b"\n")
        rest = lines.pop()  # the start of a line that a later block ends
        first_too_long = None
        if lines and max(map(len, lines)) > self.limit:
            first_too_long = next(i for i, line in enumerate(lines) if len(line) > self.limit)
            del lines[first_too_long:]
        # lstrip gives back the line itself unless it starts with whitespace, and b"" for a blank one
        out.extend(compress(enumerate(lines, self.number + 1), map(bytes.lstrip, lines)))
        self.number += len(lines)
        if first_too_long is not None:
            raise self._too_long(self.number + 1)
        self._extend(rest)


def input_lines(path: Path, *, advice: str = "save it to a file first") -> Iterator[tuple[int, bytes]]:
    """The number and bytes of each non-blank line of a plain or gzip file, without its ``\\n``.

    Blank lines (empty or only whitespace) are counted, so the numbers are
    the ones an editor shows, but skipped without a Python-level step each.

    Parameters
    ----------
    path : pathlib.Path
        A regular file; gzip-compressed or not, told by its first two bytes.
    advice : str
        What the message about a pipe or a device tells the user to do.

    Raises
    ------
    InputError
        When :func:`open_input` refuses the file; for a line longer than
        :func:`max_line_bytes` (its ``\\n`` not counted), as soon as that many
        bytes of it are read, after the lines before it; for a truncated or
        corrupt gzip stream, after the lines before the break.
    """
    splitter = _Splitter(str(path), max_line_bytes())
    lines: list[tuple[int, bytes]] = []
    with open_input(path, advice=advice) as handle, _decompressing(handle) as stream:
        try:
            for block in _blocks(stream):
                try:
                    splitter.feed(block, lines)
                except InputError:
                    yield from lines  # the lines before the one over the bound come first
                    raise
                yield from lines
                lines.clear()
        except EOFError as exc:
            number = splitter.number
            last = f"the last complete line is {number}" if number else "no line is complete"
            raise InputError(f"truncated gzip file: {last}", path=str(path)) from exc
        except (gzip.BadGzipFile, zlib.error) as exc:
            raise InputError(f"corrupt gzip file after line {splitter.number}: {exc}", path=str(path)) from exc
    splitter.finish(lines)
    yield from lines


def named_files(named: str | os.PathLike[str], *, suffixes: tuple[str, ...], what: str) -> tuple[Path, ...]:
    """The files a path names, in the order they are read: a file; a folder's files ending in ``suffixes``
    (not hidden, not in subfolders) by name; or, for a path that does not exist and has a glob character, the
    files the glob matches, in path order (DATA's shards, ``watch``'s LOGS).

    A path that exists is a file or a folder, never a glob, even with ``*`` in its name. A missing path
    without a glob character is returned as it is, so that reading it says "no such file".

    Raises
    ------
    InputError
        For a folder without such a file (``a folder without a {what}``), or a glob that matches no file.
    """
    import glob  # noqa: PLC0415

    path = Path(named)
    if path.is_dir():
        found = sorted((entry for entry in path.iterdir() if not entry.name.startswith(".")
                        and entry.name.lower().endswith(suffixes) and entry.is_file()), key=lambda entry: entry.name)
        if not found:
            raise InputError(f"a folder without a {what}: no {', '.join('*' + s for s in suffixes)} file inside",
                             path=str(named))
        return tuple(found)
    text = str(named)
    if not path.exists() and {"*", "?", "["} & set(text):
        matches = sorted(match for match in glob.glob(text, recursive=True) if Path(match).is_file())
        if not matches:
            raise InputError("matches no file", path=text)
        return tuple(Path(match) for match in matches)
    return (path,)
