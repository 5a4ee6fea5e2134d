"""The notebook layer's imports go one way: no module imports one of a higher layer, and there is no cycle.

The imports are the package test's (``tests.import_graph``: every import counts, function-level and
``TYPE_CHECKING`` ones included), kept to those between the notebook's own modules. The layers are the ones
``brute_nb/notebook/__init__.py`` documents, each folder one layer; a new module must be placed in one.
"""

from __future__ import annotations

from pathlib import Path

import brute_nb
from tests.import_graph import find_cycle, read_graph, read_modules

PACKAGE = "brute_nb.notebook"
ROOT = Path(brute_nb.__file__).parent

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("leaves", frozenset({"paths", "warm"})),
    ("views", frozenset({"views"})),
    ("settings", frozenset({"settings", "approvals"})),
    ("kernel tools", frozenset({"kernel_tools"})),
    ("stack", frozenset({"stack"})),
    ("turn", frozenset({"runner"})),
    ("session", frozenset({"session"})),
    ("cell commands", frozenset({"commands"})),
    ("registry", frozenset({"registry", "preload"})),
    ("front ends", frozenset({"front", "__init__"})),
)
LEVEL = {name: level for level, (_, names) in enumerate(LAYERS) for name in names}
"""A module's layer is its first name inside the package: its own (``settings``) or its folder's (``views.render``)."""


def short(module: str) -> str | None:
    """A module's name inside the package (``views.render``; a folder's own ``views``; the package's ``__init__``),
    None outside it."""
    if module == PACKAGE:
        return "__init__"
    return module[len(PACKAGE) + 1:] if module.startswith(PACKAGE + ".") else None


def modules() -> dict[str, Path]:
    return {name: path for module, path in read_modules(ROOT).items() if (name := short(module))}


def level(module: str) -> int | None:
    return LEVEL.get(module.split(".")[0])


def graph() -> dict[str, set[str]]:
    return {name: {d for dep in deps if (d := short(dep))} for module, deps in read_graph(ROOT).items()
            if (name := short(module))}


def test_every_module_has_a_layer() -> None:
    missing = sorted(m for m in modules() if level(m) is None)
    assert not missing, f"place {', '.join(missing)} in a layer (here and in {PACKAGE}'s docstring)"
    doc = brute_nb.notebook.__doc__ or ""
    shown = [f"``{m}/``" if path.name == "__init__.py" else f"``{m.rpartition('.')[2]}``"
             for m, path in modules().items() if m != "__init__"]
    assert [m for m in shown if m not in doc] == []


def test_no_module_imports_a_higher_layer() -> None:
    upward = [f"{m} ({LAYERS[here][0]}) imports {d} ({LAYERS[there][0]})"
              for m, deps in graph().items() if (here := level(m)) is not None
              for d in sorted(deps) if (there := level(d)) is not None and there > here]
    assert not upward, "\n".join(upward)


def test_the_imports_form_no_cycle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, " -> ".join(cycle or [])
