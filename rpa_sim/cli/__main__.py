"""``python -m rpa_sim.cli``: the command line, as the console script runs it."""

import sys

from rpa_sim.cli.entry import main

sys.exit(main())
