"""scipy's ``linear_sum_assignment``, without importing the rest of ``scipy.optimize``.

KIEval pairs competing groups by a maximum-weight assignment (``docs/metrics/kieval.md``),
which scipy computes in a small compiled module, ``scipy.optimize._lsap``. Importing it the
usual way runs ``scipy.optimize``'s package first, which imports scipy's linear algebra,
sparse matrices, special functions and FFT: 0.2 to 0.4 s of CPU, more than half of what
``rpa-sim score`` spends importing, for one function (issue 32, ``docs/reading.md``). So the
compiled module is loaded from scipy's folder by itself (the very module, and the very
function, that ``scipy.optimize`` re-exports: ``tests/test_kieval_batch.py`` checks both). When
scipy lays its files out otherwise, the function comes from ``scipy.optimize`` as usual.

>>> import numpy as np
>>> rows, columns = linear_sum_assignment(np.array([[1.0, 2.0], [3.0, 1.0]]), maximize=True)
>>> rows.tolist(), columns.tolist()
([0, 1], [1, 0])
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["linear_sum_assignment", "MODULE"]

#: The compiled module of scipy that holds the function.
MODULE = "scipy.optimize._lsap"


def _compiled() -> Callable[..., Any] | None:
    """The function of scipy's compiled module, loaded from its file alone; None where it is not found."""
    try:
        scipy = importlib.util.find_spec("scipy")  # where scipy lies, without running its package's code
        folders = [] if scipy is None else list(scipy.submodule_search_locations or [])
        finder = importlib.machinery.FileFinder(str(Path(folders[0], "optimize")), (
            importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES)) if folders else None
        spec = None if finder is None else finder.find_spec(MODULE)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, "linear_sum_assignment", None)
    except ImportError:
        return None


def _imported() -> Callable[..., Any]:
    from scipy.optimize import linear_sum_assignment as imported  # noqa: PLC0415

    return imported


#: ``scipy.optimize.linear_sum_assignment(cost_matrix, maximize=False)``: rows and columns of an optimal assignment.
linear_sum_assignment: Callable[..., Any] = _compiled() or _imported()
