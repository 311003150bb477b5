"""A module of an earlier commit, read from git and run in this process, as a benchmark's baseline.

The earlier module imports its neighbours by the names they had then (``rpa_sim.text``,
``rpa_sim.records``, ...). Those names are bound, while the module runs its imports, to today's
modules at their new places (``renamed``), or to another baseline module, exactly as the import
resolved before the package was laid out by stage: the baseline's own code is old, what it calls
outside itself is today's.
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
import types
from collections.abc import Mapping
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def module_at(commit: str, path: str, *, renamed: Mapping[str, str | types.ModuleType],
              program: str) -> types.ModuleType:
    """The module at ``path`` as it was at ``commit``, loaded as ``baseline_<stem>``.

    ``renamed`` maps an old module name the source imports to today's module name (or to a module
    already loaded). ``program`` names the benchmark in the one-line message it exits with when git or
    the commit is missing.
    """
    try:
        source = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=PROJECT, check=True,
                                capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        sys.exit(f"{program}: the baseline needs git and commit {commit[:7]} ({path}): {error}")
    module = types.ModuleType(f"baseline_{Path(path).stem}")
    saved = {name: sys.modules.get(name) for name in renamed}
    sys.modules[module.__name__] = module  # dataclasses look their module up
    try:
        for old, new in renamed.items():
            sys.modules[old] = new if isinstance(new, types.ModuleType) else importlib.import_module(new)
        exec(compile(source, f"{commit[:7]}:{path}", "exec"), module.__dict__)
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
    return module


def package_at(commit: str, folder: Path, *, program: str) -> Path:
    """The ``rpa_sim`` package of ``commit``, unpacked into the new folder ``folder`` (for ``PYTHONPATH``)."""
    try:
        archive = subprocess.run(["git", "archive", commit, "rpa_sim"], cwd=PROJECT, check=True,
                                 capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        sys.exit(f"{program}: the baseline needs git and commit {commit[:7]}: {error}")
    folder.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder
