"""The ``rpa-sim`` command line."""
