"""The public API of ``rpa_sim``: every name of ``__all__`` resolves to what its module defines, and importing
the package loads no heavy library (the names are resolved on first use)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import rpa_sim

NAMES = [name for name in rpa_sim.__all__ if name != "__version__"]


@pytest.mark.parametrize("name", NAMES)
def test_each_public_name_is_the_object_its_module_defines(name: str) -> None:
    value = getattr(rpa_sim, name)
    home = importlib.import_module(value.__module__)
    assert getattr(home, name) is value
    assert home.__name__.startswith("rpa_sim.") and home.__name__ != "rpa_sim"


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="'no_such_thing'"):
        rpa_sim.no_such_thing  # noqa: B018


def test_importing_the_package_loads_no_heavy_library() -> None:
    code = ("import sys, rpa_sim; heavy = {'numpy', 'pyarrow', 'matplotlib', 'textual', 'pydantic', 'scipy'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_dir_lists_the_public_names() -> None:
    assert set(NAMES) <= set(dir(rpa_sim))
