"""Which files of a Google Document AI ``SRC`` make which document: one ``Document``, shards, a batch's output.

Document AI writes a ``Document`` as one JSON file (``process_document``), or,
from batch processing, as **shards**: several files of one ``Document``, each
with ``shardInfo`` (``shardIndex``, ``shardCount`` and ``textOffset``, the
place of its text in the whole) and its part of the text, pages and entities.
A batch writes one folder per input document (named after the input's
position: ``0/``, ``1/``...), holding that document's shards, or a single
file for a small one. :func:`documents_of` tells, from the files' names and
their ``shardInfo`` alone (each file is peeked at, not read whole):

- a file: one document;
- a folder of ``.json`` files that are shards (``shardCount`` above 1): the
  shards of one document, named after the folder;
- a folder of whole ``Document`` files: one document each, named after the file;
- a folder of folders (a batch's output): one document per folder, named after it.

Folders and files come in natural order (``2`` before ``10``), so the documents
of a batch come in the order of its inputs. Whether the shards of one document
are all there once, and that their texts follow one another, is checked when
they are read (:func:`shards_in_order`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import msgspec

from rpa_sim.common.errors import InputError
from rpa_sim.common.inputs import check_input, read_input

__all__ = ["SourceDocument", "ShardInfo", "documents_of", "shards_in_order", "whole_number"]

# the longest int64 written as a string, as protocol buffers' JSON writes one
_INT64_DIGITS = 19


@dataclass(frozen=True)
class SourceDocument:
    """The files of one document and the id its record gets.

    Attributes
    ----------
    name : Path
        The file, or the folder of its shards: what messages name.
    files : list of Path
        Its files: one ``Document``, or its shards in name order.
    record_id : str
        The file's stem, or the folder's name.
    """

    name: Path
    files: list[Path]
    record_id: str

    def __str__(self) -> str:
        return str(self.name)


class ShardInfo(Protocol):
    """What :func:`shards_in_order` needs of a read shard."""

    path: str

    def shard_info(self) -> tuple[int, int, int]:
        """The shard's ``shardIndex``, ``shardCount`` and ``textOffset`` (0 when left out)."""

    def text_length(self) -> int:
        """The length of the shard's text."""


def documents_of(source: Path) -> list[SourceDocument]:
    """The documents of ``SRC``, told apart as the module says.

    Raises
    ------
    InputError
        For a missing source, a folder without ``.json`` files, or one that
        holds both ``.json`` files and folders of them, or whole ``Document``
        files beside shards.
    """
    if not source.is_dir():
        if not source.exists():
            raise InputError("no such file or folder", path=str(source))
        check_input(source)
        return [SourceDocument(source, [source], source.stem)]
    files = _json_files(source)
    folders = sorted((path for path in source.iterdir() if path.is_dir() and _json_files(path)),
                     key=lambda path: _natural(path.name))
    if files and folders:
        raise InputError(f"holds both .json files ({files[0].name}...) and folders of them ({folders[0].name}/...): "
                         f"give a folder of Documents, the folder of one document's shards, or a batch's output "
                         f"folder (one folder per document)", path=str(source))
    if folders:
        return [SourceDocument(folder, _json_files(folder), folder.name) for folder in folders]
    if not files:
        raise InputError("no .json files (expected a Document AI Document, its shards, or a folder of either)",
                         path=str(source))
    counts = {path: _peeked_shard_count(path) for path in files}
    shards = [path for path in files if counts[path] > 1]
    if not shards:
        return [SourceDocument(path, [path], path.stem) for path in files]
    if len(shards) < len(files):
        whole = next(path for path in files if counts[path] <= 1)
        raise InputError(f"holds both whole Documents ({whole.name}) and shards ({shards[0].name}, one of "
                         f"{counts[shards[0]]}): give each document's shards a folder of their own", path=str(source))
    return [SourceDocument(source, files, source.name)]


Shard = TypeVar("Shard", bound=ShardInfo)


def shards_in_order(shards: Sequence[Shard], folder: str) -> list[Shard]:
    """The shards of one document in ``shardIndex`` order, checked to be all there once, their texts in a row.

    Parameters
    ----------
    shards : sequence of ShardInfo
        The read files of one document (a whole ``Document`` is its one shard).
    folder : str
        Where they are, for messages about the set.

    Raises
    ------
    InputError
        For a whole ``Document`` among several files, shards of different
        counts, a shard index given twice, out of range or missing (naming
        it), or a ``textOffset`` that does not follow the texts before it.
    """
    infos = {id(shard): shard.shard_info() for shard in shards}
    whole = [shard for shard in shards if infos[id(shard)][1] <= 1]
    if whole and len(shards) > 1:
        raise InputError(f"not a shard (no shardCount above 1), but {len(shards)} files are given: a folder holds "
                         f"whole Documents, or the shards of one", path=whole[0].path)
    if whole:
        return list(shards)
    count = infos[id(shards[0])][1]
    for shard in shards:
        index, shard_count, _ = infos[id(shard)]
        if shard_count != count:
            raise InputError(f"shardInfo.shardCount: {shard_count}, but {shards[0].path} has {count}: the shards of "
                             f"two documents; give each document's shards a folder of their own", path=shard.path)
        if index >= count:
            raise InputError(f"shardInfo.shardIndex: {index}, but the document has shards 0 to {count - 1}",
                             path=shard.path)
    by_index = Counter(infos[id(shard)][0] for shard in shards)
    twice = sorted(index for index, times in by_index.items() if times > 1)
    if twice:
        paths = [Path(shard.path).name for shard in shards if infos[id(shard)][0] == twice[0]]
        raise InputError(f"shard {twice[0]} is given twice ({', '.join(paths)}): a folder holds the shards of one "
                         f"document, each once", path=folder)
    missing = [index for index in range(count) if index not in by_index]
    if missing:
        listed = ", ".join(map(str, missing[:10])) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise InputError(f"{'shard' if len(missing) == 1 else 'shards'} {listed} of the {count} (shardIndex 0 to "
                         f"{count - 1}) {'is' if len(missing) == 1 else 'are'} missing: {len(shards)} given",
                         path=folder)
    ordered = sorted(shards, key=lambda shard: infos[id(shard)][0])
    characters = 0
    for shard in ordered:
        index, _, offset = infos[id(shard)]
        if offset != characters:
            raise InputError(f"shardInfo.textOffset: shard {index} starts at character {offset} of the text, but "
                             f"the shards before it hold {characters}: not the shards of one document",
                             path=shard.path)
        characters += shard.text_length()
    return ordered


def whole_number(value: Any) -> int | None:
    """A protocol-buffer integer at least 0, as a number or as the string of digits an int64 is written as.

    ``None`` for anything else, among them strings that :meth:`str.isdigit` takes but ``int`` does not
    (``"²"``) and strings of more digits than an int64 has.

    Examples
    --------
    >>> whole_number("4350"), whole_number(7), whole_number("²"), whole_number("9" * 5000), whole_number(-1)
    (4350, 7, None, None, None)
    """
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= _INT64_DIGITS:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


class _Peek(msgspec.Struct):
    """The one member of a ``Document`` that says whether it is a shard, in either spelling."""

    shardInfo: Any = None
    shard_info: Any = None


def _peeked_shard_count(path: Path) -> int:
    """The ``shardCount`` of a file, read without parsing the rest; 0 when the file cannot say (it is then read
    whole, and its problem reported, as a Document)."""
    try:
        peek = msgspec.json.decode(read_input(path), type=_Peek)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return 0
    info = peek.shardInfo if peek.shardInfo is not None else peek.shard_info
    if not isinstance(info, dict):
        return 0
    return whole_number(info.get("shardCount", info.get("shard_count", 0))) or 0


def _json_files(folder: Path) -> list[Path]:
    return sorted((path for path in folder.glob("*.json") if path.is_file()), key=lambda path: _natural(path.name))


def _natural(name: str) -> tuple[Any, ...]:
    """A name's sort key with its runs of digits compared as numbers (``2`` before ``10``), then as written.

    >>> sorted(["10", "2", "b-1.json", "a", "b-02.json"], key=_natural)
    ['2', '10', 'a', 'b-1.json', 'b-02.json']
    """
    parts = re.split(r"([0-9]+)", name)
    return tuple((len(part.lstrip("0")), part.lstrip("0"), part) if index % 2 else part
                 for index, part in enumerate(parts))
