"""Per-field thresholds: the budgeted solver and the optimized policy built with it."""
