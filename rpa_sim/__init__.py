"""rpa-sim: replay document-AI predictions through human-review policies."""

__version__ = "0.1.0"
