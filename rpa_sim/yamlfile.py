"""Reading the project's YAML files (policies, scenarios) into validated models, with clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from rpa_sim.errors import InputError

__all__ = ["read_yaml", "validation_message", "validated"]

Model = TypeVar("Model", bound=BaseModel)


def read_yaml(path: Path) -> Any:
    """The content of a YAML file; bad YAML is an :class:`InputError` naming the file and line."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(error, 'problem', error)}", path=str(path),
                         line=None if mark is None else mark.line + 1) from None


def validation_message(error: ValidationError) -> str:
    """Pydantic's errors as ``field.path: problem`` parts joined by ``; ``."""
    parts = []
    for problem in error.errors():
        where = ".".join(str(step) for step in problem["loc"] if not str(step).startswith("function-"))
        message = problem["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def validated(model: type[Model], data: Any, *, source: str) -> Model:
    """``data`` validated as ``model``; problems become an :class:`InputError` naming ``source``."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InputError(validation_message(error), path=source) from None
