"""A study: the scenario, running it, its typed result and its one decision."""
