"""Stage 3, operate: the review team's queue and staffing, and production monitoring."""
