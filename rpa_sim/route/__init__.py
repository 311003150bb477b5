"""Stage 2, route and sweep: policies as masks over the outcome table, reviewer, costs, curves, certification."""
