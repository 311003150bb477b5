"""Stage 1, evaluate: records -> metrics per document -> an outcome table (numpy columns, Parquet files)."""
