"""Records: the canonical models, reading and writing JSONL, importers of real formats, synthetic data."""
