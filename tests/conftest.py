"""Shared test fixtures: where ``../shared`` is, and a skip when it is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"


def shared_path(*parts: str) -> Path:
    """A path under ``../shared``; the calling test is skipped when it does not exist."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared test material is not beside the project")
    return path


def load_vectors(name: str) -> dict:
    """One of the JSON files of ``../shared/vectors`` (skips when absent)."""
    return json.loads(shared_path("vectors", name).read_text(encoding="utf-8"))
