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
    ("leaves", frozenset({"paths", "render", "coalesce", "thumbnails", "chat_input", "prompt", "short_errors",
                           "warm", "live", "transcript", "chat_static", "structured_view",
                           "frame_view", "namespace_watch", "turn_model"})),
    ("settings", frozenset({"settings", "approvals"})),
    ("kernel tools", frozenset({"cells", "python_tool", "notebook_tools", "ipynb_cells", "cell_bridge",
                                  "environment",
                                  "cell_tools", "kernel_journal", "turn_undo"})),
    ("stack", frozenset({"stack"})),
    ("turn views", frozenset({"display", "terminal", "runner", "transcript_html"})),
    ("session", frozenset({"session"})),
    ("cell commands", frozenset({"cell_turn", "model_commands", "export", "provenance"})),
    ("registry", frozenset({"registry"})),
    ("front ends", frozenset({"magics", "widget", "api", "fix_button", "__init__"})),
)
LEVEL = {module: level for level, (_, modules) in enumerate(LAYERS) for module in modules}


def modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(FOLDER.glob("*.py"))}


def imported(path: Path, known: set[str]) -> set[str]:
    """The package's modules ``path`` imports, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x / from .x import y
                base = node.module.split(".")[0] if node.module else None
                names = [f"{PACKAGE}.{base}"] if base else [f"{PACKAGE}.{a.name}" for a in node.names]
            elif node.module == PACKAGE:
                names = [f"{PACKAGE}.{a.name}" for a in node.names]
            elif node.module:
                names = [node.module]
        for name in names:
            if name.startswith(PACKAGE + "."):
                module = name[len(PACKAGE) + 1:].split(".")[0]
                if module in known:
                    found.add(module)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imported(path, set(found)) - {name} for name, path in found.items()}


def test_every_module_has_a_layer() -> None:
    missing = sorted(set(modules()) - set(LEVEL))
    assert not missing, f"place {', '.join(missing)} in a layer (here and in {PACKAGE}'s docstring)"
    doc = brute_nb.notebook.__doc__ or ""
    assert [m for m in modules() if m != "__init__" and f"``{m}``" not in doc] == []


def test_no_module_imports_a_higher_layer() -> None:
    placed = {m: deps & set(LEVEL) for m, deps in graph().items() if m in LEVEL}  # the rest: the test above
    upward = [f"{m} ({LAYERS[LEVEL[m]][0]}) imports {d} ({LAYERS[LEVEL[d]][0]})"
              for m, deps in placed.items() for d in sorted(deps) if LEVEL[d] > LEVEL[m]]
    assert not upward, "\n".join(upward)


def test_the_imports_form_no_cycle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, " -> ".join(cycle or [])


@pytest.mark.parametrize("code", [
    "def f():\n    from brute_nb.notebook.magics import x\n",
    "from brute_nb.notebook import magics\n",
    "import brute_nb.notebook.magics\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from brute_nb.notebook.magics import X\n",
])
def test_the_reader_sees_every_kind_of_import(tmp_path: Path, code: str) -> None:
    source = tmp_path / "probe.py"
    source.write_text(code)
    assert imported(source, {"magics"}) == {"magics"}
