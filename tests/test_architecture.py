"""The package's structure: no import cycles, no private names taken across modules, modules of a readable size.

The import graph is built from the source with :mod:`ast`, imports inside functions included (an import placed
in a function to break a cycle still makes one). ``docs/architecture.md`` explains the layout these rules keep.
"""

from __future__ import annotations

import ast
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


def _imports(module: str) -> list[tuple[str, str | None, int]]:
    """(imported module, name taken or None, line) for every import in ``module``, nested ones included."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolved(module, node)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in MODULES:  # `from package import module` takes a module, not a name
                    found.append((submodule, None, node.lineno))
                else:
                    found.append((source, alias.name, node.lineno))
    return [(target, name, line) for target, name, line in found if target.split(".")[0] == "rpa_sim"]


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module in MODULES:
        for target, _, _ in _imports(module):
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
