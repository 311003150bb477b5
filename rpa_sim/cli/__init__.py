"""The ``rpa-sim`` command line: :func:`main` is the console script (``rpa_sim.cli:main``)."""

from rpa_sim.cli.entry import main

__all__ = ["main"]
