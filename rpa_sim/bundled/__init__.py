"""The policies and scenarios shipped with rpa-sim, and how a name given on the command line finds one.

The files are package data (``policies/*.yaml`` and ``scenarios/*.yaml`` next
to this module), read with :mod:`importlib.resources`, so a wheel carries them
and they resolve the same wherever the package is installed.

One rule turns what a user wrote into a file: written as a path (it has a path
separator or a ``.yaml``/``.yml`` suffix, or it is a :class:`~os.PathLike`),
it is a file on disk, even when a bundled file has the same name; a bare name
is a bundled name, even when a file of that name lies in the current folder. A path that does not
exist is "no such file"; only a bare name that matches nothing lists the bundled names.

Examples
--------
>>> bundled_names("scenario")[:2]
['certified-threshold', 'cost-benefit']
>>> resolve("policy", "confidence").name
'confidence.yaml'
>>> resolve("policy", "confidance")  # doctest: +ELLIPSIS
Traceback (most recent call last):
  ...
rpa_sim.common.errors.InputError: no bundled policy named 'confidance'; did you mean 'confidence'? (bundled: ...)
>>> resolve("policy", "./confidance.yaml")
Traceback (most recent call last):
  ...
rpa_sim.common.errors.InputError: ./confidance.yaml: no such file
"""

from __future__ import annotations

import difflib
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rpa_sim.common.errors import InputError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["Kind", "bundled_files", "bundled_names", "is_path", "resolve"]

Kind = Literal["policy", "scenario"]
_FOLDERS: dict[str, str] = {"policy": "policies", "scenario": "scenarios"}
_SUFFIX = ".yaml"
_PATH_SUFFIXES = (".yaml", ".yml")


def _folder(kind: str) -> str:
    if kind not in _FOLDERS:
        raise ValueError(f"kind must be one of {sorted(_FOLDERS)}, got {kind!r}")
    return _FOLDERS[kind]


def bundled_files(kind: Kind) -> dict[str, Traversable]:
    """The bundled files of one kind, by name (the file name without ``.yaml``), sorted by name.

    Parameters
    ----------
    kind : {"policy", "scenario"}

    Returns
    -------
    dict of str to Traversable
        Each file as :func:`importlib.resources.files` gives it: a
        :class:`~pathlib.Path` when the package is installed as files, as pip
        installs it.
    """
    folder = resources.files(__name__) / _folder(kind)
    files = {entry.name.removesuffix(_SUFFIX): entry for entry in folder.iterdir()
             if entry.name.endswith(_SUFFIX) and entry.is_file()}
    return dict(sorted(files.items()))


def bundled_names(kind: Kind) -> list[str]:
    """The names of the bundled files of one kind, sorted.

    >>> bundled_names("policy")  # doctest: +NORMALIZE_WHITESPACE
    ['audited-budget', 'confidence', 'document-confidence-mean', 'document-escalation', 'grounding-gate',
     'grounding-sweep', 'missing-confidence-review', 'per-document-type', 'per-field', 'reject-band']
    """
    return list(bundled_files(kind))


def is_path(name_or_path: str | os.PathLike[str]) -> bool:
    """Whether the user wrote a path (read from disk) rather than a bundled name.

    A path is a :class:`~os.PathLike`, or text with a path separator or a
    ``.yaml``/``.yml`` suffix (in any case).

    >>> is_path("per-field"), is_path("rules/per-field"), is_path("per-field.YAML"), is_path(Path("per-field"))
    (False, True, True, True)
    """
    if isinstance(name_or_path, os.PathLike):
        return True
    separators = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return any(sep in name_or_path for sep in separators) or name_or_path.lower().endswith(_PATH_SUFFIXES)


def resolve(kind: Kind, name_or_path: str | os.PathLike[str], *,
            relative_to: os.PathLike[str] | None = None) -> Traversable:
    """The file a bundled name or a path stands for (see the module's rule).

    Parameters
    ----------
    kind : {"policy", "scenario"}
    name_or_path : str or PathLike
        A bundled name (``confidence``) or a path (``./confidence``,
        ``my.yaml``, ``rules/strict.yml``).
    relative_to : PathLike, optional
        The folder a relative path starts from (a scenario's folder for the
        policies it names), instead of the current folder. Names ignore it.

    Returns
    -------
    Traversable
        For a path, the :class:`~pathlib.Path`; for a name, the bundled file.

    Raises
    ------
    InputError
        When the path does not exist (``no such file``, the path as written, or as tried from
        ``relative_to``), or the name is not bundled (the bundled names listed, the nearest suggested).
    """
    bundled = bundled_files(kind)
    if is_path(name_or_path):
        path = Path(relative_to or "", name_or_path)
        if path.exists():  # reading it refuses a folder, a pipe or a device in its own words
            return path
        raise InputError("no such file", path=str(name_or_path) if relative_to is None else str(path))
    given = str(name_or_path)
    if given in bundled:
        return bundled[given]
    nearest = difflib.get_close_matches(given, bundled, n=1)
    guess = f"; did you mean {nearest[0]!r}?" if nearest else ""
    # a bare name never reads a local file, so say how to ask for the one that is there
    here = Path(relative_to or "", given)
    hint = f"; to read the file {str(here)!r}, write it as a path: ./{given}" if here.is_file() else ""
    raise InputError(f"no bundled {kind} named {given!r}{guess} (bundled: {', '.join(bundled)}){hint}")
