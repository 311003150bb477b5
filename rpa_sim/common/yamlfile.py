"""Reading the project's YAML files (policies, scenarios, settings) into validated models, with clear errors.

A problem is an :class:`~rpa_sim.common.errors.InputError` naming the file and, when
it can be found, the line: a file that is missing, a folder, not UTF-8, not
YAML or nested too deeply; a value the model rejects, worded in plain terms
(``expected a number at most 1 or 'sweep', got 1.5``), never in pydantic's
type names.

Examples
--------
>>> import tempfile
>>> from pydantic import BaseModel, Field
>>> class Rates(BaseModel):
...     miss_rate: float = Field(ge=0, le=1)
>>> tmp = tempfile.TemporaryDirectory()
>>> path = Path(tmp.name) / "rates.yaml"
>>> _ = path.write_text("# a reviewer\\nmiss_rate: 2\\n")
>>> validated(Rates, read_yaml(path), source=str(path))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rpa_sim.common.errors.InputError: .../rates.yaml: line 2: miss_rate: expected a number at most 1, got 2
>>> tmp.cleanup()
"""

from __future__ import annotations

import codecs
import contextlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from rpa_sim.common.errors import InputError, UsageError, shown
from rpa_sim.common.inputs import read_input
from rpa_sim.common.limits import SizeError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from pydantic_core import ErrorDetails

__all__ = ["read_yaml", "validation_message", "validated", "field_line", "settings_located"]

Model = TypeVar("Model", bound=BaseModel)

_TOO_DEEP = "nested too deeply"
# values are quoted as YAML's flow style quotes them
_QUOTE = "'"


def _read_text(path: Path | Traversable) -> str:
    """The text of a YAML file, without a leading byte-order mark.

    A file on disk is read by :func:`rpa_sim.common.inputs.read_input` (a regular
    file, at most ``RPA_SIM_MAX_FILE_BYTES``); a bundled one as it is.
    """
    try:
        data = read_input(path) if isinstance(path, Path) else path.read_bytes().removeprefix(codecs.BOM_UTF8)
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8: byte 0x{error.object[error.start]:02x} at byte {error.start + 1}",
                         path=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot be read: {error.strerror}", path=str(path)) from None


def read_yaml(path: Path | Traversable) -> Any:
    """The content of a YAML file; a missing, unreadable or bad file is an :class:`InputError` naming it.

    Parameters
    ----------
    path : Path or Traversable
        A file on disk or a bundled file.
    """
    text = _read_text(path)
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: plain data only, no Python objects
    except yaml.reader.ReaderError as error:
        # a character YAML does not allow (a control character): its place, from its offset in the text
        line = text.count("\n", 0, error.position) + 1
        column = error.position - text.rfind("\n", 0, error.position)
        character = shown(chr(error.character), quote=_QUOTE) if isinstance(error.character, int) else "?"
        raise InputError(f"not valid YAML: the character {character} at column {column} is not allowed in YAML",
                         path=str(path), line=line) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or getattr(error, "context", None) or error
        raise InputError(f"not valid YAML: {problem}", path=str(path),
                         line=None if mark is None else mark.line + 1) from None
    except RecursionError:
        raise InputError(f"not usable YAML: {_TOO_DEEP}", path=str(path)) from None


class _StrictLoader(yaml.SafeLoader):
    """``yaml.safe_load``'s loader, refusing what it would take silently or fail on without a place.

    A key given twice in one mapping is refused, naming the line of the
    second (``safe_load`` keeps the last value); keys a merge (``<<``)
    brings in may still be overridden, as YAML means. A scalar its type
    cannot hold (``!!float abc``, a date ``2021-13-45``, an integer of
    thousands of digits) is a YAML error at its line, not a Python
    ``ValueError``. Tags stay those of ``safe_load``: plain data only.
    """

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            first_of: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = first_of.setdefault(key, key_node)
                except TypeError:
                    continue  # an unhashable key: the base constructor refuses it, with its place
                if first is not key_node:
                    twice = (f"the key {shown(key, quote=_QUOTE)} is given twice "
                             f"(first on line {first.start_mark.line + 1})")
                    raise yaml.constructor.ConstructorError(None, None, twice, key_node.start_mark)
        return super().construct_mapping(node, deep=deep)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as error:
            if not isinstance(node, yaml.ScalarNode):
                raise yaml.constructor.ConstructorError(None, None, str(error), node.start_mark) from None
            unreadable = f"cannot read {shown(node.value, quote=_QUOTE)} as {node.tag.rsplit(':', 1)[-1]}"
            raise yaml.constructor.ConstructorError(None, None, unreadable, node.start_mark) from None


# --------------------------------------------------------------------------- locating a field


def _raw_steps(loc: tuple[str | int, ...], data: Any) -> list[str | int]:
    """The steps of a pydantic location that exist in the data as written.

    Dropped: the tags pydantic adds for each alternative of a union
    (``constrained-float``, ``literal['sweep']``, ``function-after[...]``, the
    value of a discriminated union's tag, ``kind: mix``) and the fields a
    shorthand stands for (``confidence: 0.8`` for ``{below: 0.8}``).

    >>> _raw_steps(("review_if", "confidence", "below", "constrained-float"), {"review_if": {"confidence": 1.5}})
    ['review_if', 'confidence']
    >>> _raw_steps(("policies", 0, "str"), {"policies": [5]})
    ['policies', 0]
    >>> _raw_steps(("changes", 0, "mix", "from_day"), {"changes": [{"kind": "mix", "from_day": 0}]})
    ['changes', 0, 'from_day']
    """
    steps: list[str | int] = []
    node = data
    for step in loc:
        if isinstance(node, dict) and step not in node and step in node.values():
            continue  # a discriminated union's tag: the alternative the data's own tag chose
        if isinstance(step, int) and isinstance(node, list):
            steps.append(step)
            node = node[step] if step < len(node) else None
        elif isinstance(step, str) and isinstance(node, dict):
            steps.append(step)
            node = node.get(step)
        else:
            node = None
    return steps


def _field_path(steps: list[str | int]) -> str:
    """
    >>> _field_path(["review_if", "any_of", 0, "confidence"])
    'review_if.any_of[0].confidence'
    """
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else f".{step}" if text else step
    return text


def _line_of(root: yaml.Node | None, steps: Sequence[str | int]) -> int | None:
    """The 1-based line of the node at ``steps`` in a composed YAML tree (or of its nearest parent)."""
    node, line = root, None
    for step in steps:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode) and isinstance(step, str):
            node = next((value for key, value in node.value
                         if isinstance(key, yaml.ScalarNode) and key.value == step), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            node = None
    if node is not None:
        line = node.start_mark.line + 1
    return line


def _composed(source: str) -> yaml.Node | None:
    """The YAML node tree of the file ``source`` names, when it is a readable YAML file."""
    try:
        return yaml.compose(_read_text(Path(source)))
    except (InputError, yaml.YAMLError, RecursionError):
        return None


# --------------------------------------------------------------------------- wording


_KINDS = {
    "float_type": "a number", "float_parsing": "a number", "finite_number": "a finite number",
    "int_type": "a whole number", "int_parsing": "a whole number", "int_from_float": "a whole number",
    "string_type": "text", "bool_type": "true or false", "bool_parsing": "true or false",
    "list_type": "a list", "tuple_type": "a list", "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)", "model_attributes_type": "a mapping (key: value)",
    "none_required": "nothing (null)",
}
_BOUNDS = {"greater_than": "greater than {gt:g}", "greater_than_equal": "at least {ge:g}",
           "less_than": "less than {lt:g}", "less_than_equal": "at most {le:g}",
           "multiple_of": "a multiple of {multiple_of:g}"}


def _expected(error: ErrorDetails) -> str | None:
    """What an alternative of the field expected, in plain words; None when the error is not about a type."""
    kind, ctx = error["type"], error.get("ctx", {})
    if kind in _KINDS:
        return _KINDS[kind]
    if kind in _BOUNDS:
        bound = _BOUNDS[kind].format(**ctx)
        return f"a number {bound}" if isinstance(error.get("input"), (int, float)) else bound
    if kind in ("literal_error", "enum"):
        return "one of " + ctx["expected"] if ", " in ctx["expected"] else ctx["expected"]
    return None


def _problem(errors: list[ErrorDetails]) -> str:
    """The problem of one field, from the errors pydantic reports there (one per alternative of a union)."""
    first = errors[0]
    kind = first["type"]
    got = shown(first.get("input"), quote=_QUOTE)
    if kind == "missing":
        return "missing (required)"
    if kind == "extra_forbidden":
        return "not a known field (misspelt?)"
    if kind in ("too_short", "string_too_short"):
        least = first.get("ctx", {}).get("min_length", 1)
        what = "character" if kind == "string_too_short" else "item"
        return f"needs at least {least} {what}{'' if least == 1 else 's'}, got {got}"
    if kind in ("too_long", "string_too_long"):
        most = first.get("ctx", {}).get("max_length")
        return f"has more than {most} items"
    if kind in ("value_error", "assertion_error"):
        return str(first.get("ctx", {}).get("error", first["msg"])).removeprefix("Value error, ")
    expected = [text for text in (_expected(error) for error in errors) if text is not None]
    if expected:
        alternatives = list(dict.fromkeys(expected))
        return f"expected {' or '.join(alternatives)}, got {got}"
    return f"{first['msg'][:1].lower()}{first['msg'][1:]}, got {got}"


def _located(error: ValidationError, data: Any) -> list[tuple[list[str | int], str]]:
    """Each field with problems (as written in the file), in pydantic's order, with its worded problem."""
    by_field: dict[tuple[str | int, ...], list[ErrorDetails]] = {}
    for problem in error.errors(include_url=False):
        by_field.setdefault(tuple(_raw_steps(problem["loc"], data)), []).append(problem)
    return [(list(steps), _problem(problems)) for steps, problems in by_field.items()]


def validation_message(error: ValidationError, *, data: Any = None, root: yaml.Node | None = None) -> str:
    """Pydantic's errors as ``line N: field.path: problem`` parts joined by ``; `` (lines when ``root`` is given).

    Parameters
    ----------
    error : ValidationError
    data : any, optional
        The validated data, to name fields as they are written (without the
        tags of union alternatives).
    root : yaml.Node, optional
        The composed YAML of the data, to give each field's line.
    """
    parts = []
    for steps, problem in _located(error, data):
        where = _field_path(steps)
        line = None if root is None else _line_of(root, steps)
        text = f"{where}: {problem}" if where else problem
        parts.append((line or 0, text if line is None else f"line {line}: {text}"))
    return "; ".join(text for _, text in sorted(parts, key=lambda part: part[0]))


def field_line(source: str, steps: Sequence[str | int]) -> int | None:
    """The line of the field at ``steps`` (or of its nearest parent written) in the YAML file ``source``.

    None when ``source`` is not a readable YAML file.
    """
    root = _composed(source)
    return None if root is None else _line_of(root, steps)


def _size_problem(error: ValidationError, data: Any, source: str) -> UsageError | None:
    """The first size out of range among the problems (:class:`~rpa_sim.common.limits.SizeError`), as a usage error."""
    for problem in error.errors(include_url=False):
        size = problem.get("ctx", {}).get("error")
        if isinstance(size, SizeError):
            steps = _raw_steps((*problem["loc"], *size.field), data)
            return UsageError(str(size), path=source, line=field_line(source, steps),
                              field=_field_path(steps) or None)
    return None


def validated(model: type[Model], data: Any, *, source: str) -> Model:
    """``data`` validated as ``model``; problems become an :class:`InputError` naming ``source``.

    When ``source`` is the path of the YAML file the data was read from, each
    problem gives its line there. A size out of range
    (:class:`~rpa_sim.common.limits.SizeError`) is a :class:`~rpa_sim.common.errors.UsageError`
    instead (exit status 2), before any other problem: it is what would run
    away.
    """
    try:
        return model.model_validate(data)
    except ValidationError as error:
        size = _size_problem(error, data, source)
        if size is not None:
            raise size from None
        root = _composed(source)
        located = _located(error, data)
        if len(located) == 1:
            steps, problem = located[0]
            raise InputError(problem, path=source, line=None if root is None else _line_of(root, steps),
                             field=_field_path(steps) or None) from None
        raise InputError(validation_message(error, data=data, root=root), path=source) from None


@contextlib.contextmanager
def settings_located(source: str, section: str) -> Iterator[None]:
    """Name the YAML file ``source`` and the line of the setting in the errors raised inside that name a setting
    of its ``section`` (a field such as ``stream.changes[1].auto_error``) but no file: errors found once the data
    is read, after the file was validated.

    >>> with settings_located("no-such.yaml", "stream"):
    ...     raise InputError("0.001 is below the rate", field="stream.changes[1].auto_error")
    Traceback (most recent call last):
    ...
    rpa_sim.common.errors.InputError: no-such.yaml: stream.changes[1].auto_error: 0.001 is below the rate
    """
    try:
        yield
    except InputError as error:
        location = error.location
        field = location.field
        if location.path is not None or field is None or re.match(rf"{re.escape(section)}\b", field) is None:
            raise
        steps: list[str | int] = [int(part) if part.isdigit() else part for part in re.findall(r"[^.\[\]]+", field)]
        raise InputError(error.problem, path=source, line=field_line(source, steps), record_id=location.record_id,
                         field=field) from None
