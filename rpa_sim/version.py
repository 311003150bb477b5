"""The version of rpa-sim, in one place: the package's metadata (pyproject.toml reads it), ``rpa-sim --version``,
the report's provenance and the outcome tables' writer read it here.

The package root re-exports it for users (``rpa_sim.__version__``); nothing inside the package imports the root.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
