"""What every stage uses: errors, safe reading and atomic writing, sizes, YAML, JSON, progress, workers, formatting."""
