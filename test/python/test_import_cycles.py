"""No import cycles between the modules of the project's packages.

The graph is built from the source (ast), not by importing: every `import`
and `from ... import` counts, at module level or inside a function, under
`TYPE_CHECKING` too, so that a cycle cannot hide behind a function-level
import. An edge goes to the module a name is imported from (to the
submodule when the imported name is one).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The packages of the project (pyproject.toml, `packages.find`).
PACKAGES = (
    "irgl_dialect",
    "lowering",
    "cuda_emitter",
    "irgl_tools",
    "irgl_runner",
    "irgl_interpreter",
)


def _modules(root: Path, packages: tuple[str, ...]) -> dict[str, tuple[Path, bool]]:
    """Every module of `packages` under `root`: its file, and whether it is
    a package's `__init__`."""
    modules: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            modules[".".join(parts)] = (path, is_package)
    return modules


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module -> the modules of `packages` it imports (all import statements)."""
    modules = _modules(root, packages)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        base = name if is_package else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    source = ".".join([*parts, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    if full in modules:
                        deps.add(full)
                    elif source in modules:
                        deps.add(source)
        deps.discard(name)
        graph[name] = deps
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan),
    each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(package: str) -> None:
    graph = import_graph(ROOT, PACKAGES)
    cycles = [
        c for c in import_cycles(graph) if any(m.split(".")[0] == package for m in c)
    ]
    assert not cycles, f"import cycles: {cycles}"


def test_the_graph_covers_the_interpreter() -> None:
    graph = import_graph(ROOT, PACKAGES)
    assert "irgl_interpreter.state" in graph["irgl_interpreter.c_escape"]
    assert "irgl_interpreter.sync" in graph["irgl_interpreter.loops"]


def test_a_function_level_import_cycle_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import g\n")
    (package / "b.py").write_text("def g():\n    from . import a\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n"
    )
    (package / "d.py").write_text("from pkg import c\n")
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.d"] == {"pkg.c"}
    assert import_cycles(graph) == [["pkg.a", "pkg.b"]]
