"""What the layer tests share: the package's modules, the imports read from their source, and finding a cycle.

Read with ``ast``, so every import counts: module-level, inside a function (the usual hiding place of a cycle),
under ``TYPE_CHECKING``, relative, and attribute access through the package (``brute_nb.frames.frame`` after
``import brute_nb``). ``tests/core/test_package_layers.py`` checks the package's layers with it,
``tests/notebook/test_import_layers.py`` the finer ones inside ``notebook/``.
"""

from __future__ import annotations

import ast
from pathlib import Path


def read_modules(root: Path) -> dict[str, Path]:
    """Every module below the package folder ``root`` by its dotted name (a folder's ``__init__`` by the folder's)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _owner(name: str, known: set[str]) -> str | None:
    """The package module ``name`` (a dotted name, maybe ending in an attribute) lives in."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``path`` (module ``name``) imports or reaches, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Attribute):
            chain: list[str] = []
            inner: ast.expr = node
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id == "brute_nb":
                target = "brute_nb." + ".".join(reversed(chain))
                if (owner := _owner(target, known)) not in (None, "brute_nb"):
                    found.add(owner)  # attribute access reaches a submodule; the package itself is import's business
            continue
        for target in targets:
            if target.startswith("brute_nb") and (owner := _owner(target, known)):
                found.add(owner)
    found.discard(name)
    return found


def read_graph(root: Path) -> dict[str, set[str]]:
    """Each module below ``root`` and the package's modules it imports."""
    found = read_modules(root)
    known = set(found)
    return {name: imported(name, path, known) for name, path in found.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (``a, b, a``), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None
