"""The notebook layer's imports go one way: no module imports one of a higher layer, and there is no cycle.

Read from the source with ``ast`` (as ``test_lazy_load`` reads the widget's imports), so every import counts:
module-level, inside a function (the usual hiding place of a cycle) and under ``TYPE_CHECKING``. The layers are
the ones ``brute_nb/notebook/__init__.py`` documents; a new module must be placed in one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import brute_nb.notebook
from tests.import_graph import find_cycle

PACKAGE = "brute_nb.notebook"
FOLDER = Path(brute_nb.notebook.__file__).parent

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("leaves", frozenset({"paths", "prompt", "warm"})),
    ("views", frozenset({"views"})),
    ("settings", frozenset({"settings", "approvals"})),
    ("kernel tools", frozenset({"kernel_tools"})),
    ("stack", frozenset({"stack"})),
    ("turn", frozenset({"runner"})),
    ("session", frozenset({"session"})),
    ("cell commands", frozenset({"commands"})),
    ("registry", frozenset({"registry"})),
    ("front ends", frozenset({"front", "__init__"})),
)
LEVEL = {name: level for level, (_, names) in enumerate(LAYERS) for name in names}
"""A module's layer is its first name inside the package: its own (``settings``) or its folder's (``views.render``)."""


def modules() -> dict[str, Path]:
    """The package's modules by their name inside it (``views.render``; a folder's own is ``views.__init__``)."""
    return {".".join(p.relative_to(FOLDER).with_suffix("").parts): p for p in sorted(FOLDER.rglob("*.py"))}


def level(module: str) -> int | None:
    return LEVEL.get(module.split(".")[0])


def _owner(name: str, known: set[str]) -> str | None:
    """The module ``name`` (dotted inside the package, maybe ending in an attribute) lives in."""
    while name:
        if name in known:
            return name
        if f"{name}.__init__" in known:
            return f"{name}.__init__"
        name = name.rpartition(".")[0]
    return None


def imported(path: Path, known: set[str], name: str = "probe") -> set[str]:
    """The package's modules ``path`` (module ``name``) imports, at any depth of its code."""
    parts = name.split(".")
    package = parts[:-1]  # where a relative import starts (a folder's __init__ is in the folder)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x / from .x import y
                base = ".".join([PACKAGE, *package[: len(package) - node.level + 1], *filter(None, [node.module])])
            else:
                base = node.module or ""
            names = [f"{base}.{a.name}" for a in node.names]
        for dotted in names:
            if dotted.startswith(PACKAGE + ".") and (owner := _owner(dotted[len(PACKAGE) + 1:], known)):
                found.add(owner)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imported(path, set(found), name) - {name} for name, path in found.items()}


def test_every_module_has_a_layer() -> None:
    missing = sorted(m for m in modules() if level(m) is None)
    assert not missing, f"place {', '.join(missing)} in a layer (here and in {PACKAGE}'s docstring)"
    doc = brute_nb.notebook.__doc__ or ""
    shown = [f"``{m.split('.')[0]}/``" if m.endswith(".__init__") else f"``{m.rpartition('.')[2]}``"
             for m in modules() if m != "__init__"]
    assert [m for m in shown if m not in doc] == []


def test_no_module_imports_a_higher_layer() -> None:
    upward = [f"{m} ({LAYERS[here][0]}) imports {d} ({LAYERS[there][0]})"
              for m, deps in graph().items() if (here := level(m)) is not None
              for d in sorted(deps) if (there := level(d)) is not None and there > here]
    assert not upward, "\n".join(upward)


def test_the_imports_form_no_cycle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, " -> ".join(cycle or [])


@pytest.mark.parametrize("code", [
    "def f():\n    from brute_nb.notebook.front.magics import x\n",
    "from brute_nb.notebook.front import magics\n",
    "import brute_nb.notebook.front.magics\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from brute_nb.notebook.front.magics import X\n",
])
def test_the_reader_sees_every_kind_of_import(tmp_path: Path, code: str) -> None:
    source = tmp_path / "probe.py"
    source.write_text(code)
    assert imported(source, {"front.magics"}) == {"front.magics"}


@pytest.mark.parametrize(("code", "module"), [
    ("from brute_nb.notebook.views import render\n", "front.widget"),
    ("from brute_nb.notebook.views.render import ToolView\n", "front.widget"),
    ("from ..views import render\n", "front.widget"),
    ("from .render import ToolView\n", "views.display"),
])
def test_the_reader_finds_a_module_in_a_folder(tmp_path: Path, code: str, module: str) -> None:
    source = tmp_path / "probe.py"
    source.write_text(code)
    assert imported(source, {"views.render", "views.__init__", "front.widget"}, module) == {"views.render"}
