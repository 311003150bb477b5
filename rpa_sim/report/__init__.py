"""The HTML report of a study."""
