"""The package's structure: the stages in flow order, no import cycles, no private names taken across modules,
modules of a readable size.

The import graph is built from the source with :mod:`ast`, imports inside functions and under ``if
TYPE_CHECKING:`` included (an import placed in a function to break a cycle still makes one, and a type-only
import still ties the stages). ``docs/architecture.md`` explains the layout these rules keep.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rpa_sim"
MAX_LINES = 700


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolved(module: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``from ... import`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(module: str, source: str | None = None) -> list[tuple[str, str | None, int]]:
    """(imported module, name taken or None, line) for every import in ``module`` (its file, or ``source``),
    nested ones included."""
    return _file_imports(module) if source is None else _source_imports(module, source)


@functools.cache
def _file_imports(module: str) -> list[tuple[str, str | None, int]]:
    """:func:`_imports` of a module's file, read once for every test."""
    return _source_imports(module, MODULES[module].read_text(encoding="utf-8"))


def _source_imports(module: str, source: str) -> list[tuple[str, str | None, int]]:
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            origin = _resolved(module, node)
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                if submodule in MODULES:  # `from package import module` takes a module, not a name
                    found.append((submodule, None, node.lineno))
                else:
                    found.append((origin, alias.name, node.lineno))
    return [(target, name, line) for target, name, line in found if target.split(".")[0] == "rpa_sim"]


def _graph(sources: dict[str, str] | None = None) -> dict[str, set[str]]:
    """Module to the modules it imports; ``sources`` stand in for the files of the modules they name."""
    sources = sources or {}
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module in MODULES:
        for target, _, _ in _imports(module, sources.get(module)):
            while target not in MODULES and "." in target:  # a name of a package's module
                target = target.rsplit(".", 1)[0]
            # importing a package runs its __init__, so a module's package is a dependency; its own is not
            if target in MODULES and target != module and not module.startswith(target + "."):
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


#: The stages in the order of the flow (docs/architecture.md): a module imports its own stage and those before it.
#: ``common`` (and the package data ``bundled`` and ``version``) is below all; the front ends are the last stage.
STAGES = (("common", "bundled", "version"), ("records",), ("evaluate",), ("route",), ("operate",), ("study",),
          ("cli", "report", "tui"))
FRONT_ENDS = STAGES[-1]
#: The one composition root: the command line builds the report and the dashboard; no other front end imports
#: another.
COMPOSITION_ROOT = "cli"


def _stage(module: str) -> tuple[int, str]:
    """The stage of a module (its index in :data:`STAGES`) and its top folder."""
    top = module.split(".")[1]
    return next(index for index, folders in enumerate(STAGES) if top in folders), top


def stage_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import against the flow: of a later stage, of another front end than the composition root may
    take, or of the package root (whose names come from their own modules)."""
    found = []
    for module in sorted(graph):
        if module == "rpa_sim":
            continue
        stage, top = _stage(module)
        for target in sorted(graph[module]):
            if target == "rpa_sim":
                found.append(f"{module} imports the package root rpa_sim: import the name from its module")
                continue
            later, other = _stage(target)
            if other == top:
                continue
            if later > stage:
                found.append(f"{module} imports {target}, a later stage ({other} after {top})")
            elif later == stage == len(STAGES) - 1 and top != COMPOSITION_ROOT:
                found.append(f"{module} imports {target}: only {COMPOSITION_ROOT}, the composition root, imports "
                             f"another front end")
    return found


def _root_imports(sources: dict[str, str] | None = None) -> dict[str, set[str]]:
    """Module to ``{"rpa_sim"}`` when it imports the package root or a name of it (not a module below it)."""
    sources = sources or {}
    return {module: {"rpa_sim"} for module in MODULES if module != "rpa_sim"
            and any(target == "rpa_sim" for target, _, _ in _imports(module, sources.get(module)))}


def test_every_module_is_in_a_stage() -> None:
    folders = {folder for stage in STAGES for folder in stage}
    assert [module for module in MODULES if module != "rpa_sim" and module.split(".")[1] not in folders] == []


def test_nothing_imports_up_the_flow() -> None:
    graph = _graph()
    for module, roots in _root_imports().items():
        graph[module] |= roots
    assert stage_violations(graph) == []


def test_the_stage_rule_catches_each_kind_of_violation() -> None:
    graph = {"rpa_sim.route.sweep": {"rpa_sim.study.result", "rpa_sim.evaluate.outcomes"},
             "rpa_sim.operate.queue.summary": {"rpa_sim.route.sweep", "rpa_sim.operate.queue.erlang"},
             "rpa_sim.report.page": {"rpa_sim.tui.app", "rpa_sim.study.run"},
             "rpa_sim.tui.app": {"rpa_sim.cli.entry"},
             "rpa_sim.cli.scenarios": {"rpa_sim.report.page", "rpa_sim.tui.app"},
             "rpa_sim.common.files": {"rpa_sim.records.models"},
             "rpa_sim.records.synthetic.receipts": {"rpa_sim.evaluate.metrics.text"},
             "rpa_sim.evaluate.tablefile": {"rpa_sim"}}
    assert stage_violations(graph) == [
        "rpa_sim.common.files imports rpa_sim.records.models, a later stage (records after common)",
        "rpa_sim.evaluate.tablefile imports the package root rpa_sim: import the name from its module",
        "rpa_sim.records.synthetic.receipts imports rpa_sim.evaluate.metrics.text, a later stage (evaluate after "
        "records)",
        "rpa_sim.report.page imports rpa_sim.tui.app: only cli, the composition root, imports another front end",
        "rpa_sim.route.sweep imports rpa_sim.study.result, a later stage (study after route)",
        "rpa_sim.tui.app imports rpa_sim.cli.entry: only cli, the composition root, imports another front end"]


def test_a_type_checking_import_up_the_flow_in_a_module_is_caught() -> None:
    """A deliberate violation in a module's source: operate taking the study's result types, for type hints only;
    and a module taking ``__version__`` from the package root."""
    sources = {"rpa_sim.operate.queue.results": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                                "    from rpa_sim.study.result import StudySummary\n",
               "rpa_sim.cli.parser": "from rpa_sim import __version__\n"}
    graph = _graph(sources)
    for module, roots in _root_imports(sources).items():
        graph[module] |= roots
    found = stage_violations(graph)
    assert "rpa_sim.operate.queue.results imports rpa_sim.study.result, a later stage (study after operate)" in found
    assert "rpa_sim.cli.parser imports the package root rpa_sim: import the name from its module" in found


def test_the_package_has_no_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_name_is_taken_from_another_module(module: str) -> None:
    taken = [f"line {line}: {name} from {target}" for target, name, line in _imports(module)
             if name is not None and name.startswith("_") and not name.startswith("__") and target != module]
    assert taken == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_readable(module: str) -> None:
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module].relative_to(PACKAGE.parent)} has {lines} lines"
