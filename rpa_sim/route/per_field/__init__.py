"""Per-field thresholds: the problem as one curve per field, the budgeted solver, its answer, and the optimized
policy built with it."""
