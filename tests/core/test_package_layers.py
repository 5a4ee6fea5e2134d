"""The whole package's imports go one way: no module imports one of a higher layer, and there is no cycle.

Read from the source by ``tests.import_graph``, so every import counts: module-level, inside a function (the usual
hiding place of a cycle), under ``TYPE_CHECKING``, relative, and attribute access through the package
(``brute_nb.frames.frame`` after ``import brute_nb``, which is how ``message.py`` once reached up to ``frames``).
The layers are the ones docs/architecture.md draws; a new module must be placed in one.
``tests/notebook/test_import_layers.py`` checks the finer layers inside ``notebook/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import brute_nb
from tests.import_graph import find_cycle, imported, read_graph, read_modules

ROOT = Path(brute_nb.__file__).parent
ARCHITECTURE = ROOT.parent / "docs" / "architecture.md"

NOTEBOOK_FRONT_ENDS = ("brute_nb.notebook.front",)

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("brute_nb._lazy", "brute_nb.env", "brute_nb.errors", "brute_nb.events", "brute_nb.redact",
                    "brute_nb.maybe_async", "brute_nb.event_loop", "brute_nb.cost", "brute_nb.usage",
                    "brute_nb.retry_after", "brute_nb.plugins", "brute_nb.confine", "brute_nb.tracing",
                    "brute_nb.raw_replies", "brute_nb.providers.profiles",
                    "brute_nb.providers.factories", "brute_nb.amounts")),
    ("values", ("brute_nb.attachments", "brute_nb.structured", "brute_nb.reply_readers", "brute_nb.message",
                "brute_nb.log", "brute_nb.frames", "brute_nb.prompt_cache", "brute_nb.prefix_memo",
                "brute_nb.sendable", "brute_nb.redact_messages", "brute_nb.refused", "brute_nb.fill")),
    ("sessions", ("brute_nb.sessions",)),
    ("translation", ("brute_nb.transports", "brute_nb.tools", "brute_nb.compaction")),
    ("agent", ("brute_nb.agent", "brute_nb.providers", "brute_nb.testing")),
    ("middleware", ("brute_nb.middleware",)),
    ("map", ("brute_nb.map",)),
    ("notebook core", ("brute_nb.notebook.",)),
    ("front ends", (*NOTEBOOK_FRONT_ENDS, "brute_nb.notebook", "brute_nb.cli", "brute_nb")),
)
"""Lowest first. A module belongs to the layer of the longest name it starts with (``brute_nb.notebook.`` is every
notebook module but its front ends, which are named). ``map`` is an engine below the whole notebook: it takes a
context (``map.context``) that the notebook's front door builds from the kernel's settings, and imports nothing of
``notebook/``."""


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for level, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            # The package itself is a front end, its modules are not: "brute_nb" places only brute_nb/__init__.py.
            below = prefix != "brute_nb" and module.startswith(prefix if prefix.endswith(".") else prefix + ".")
            matches = module == prefix or below
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), level)
    return None if best is None else best[1]


def test_every_module_has_a_layer() -> None:
    missing = sorted(m for m in read_modules(ROOT) if layer_of(m) is None)
    assert not missing, f"place {', '.join(missing)} in a layer (here and in docs/architecture.md)"


def test_no_module_imports_a_higher_layer() -> None:
    upward = []
    for module, deps in read_graph(ROOT).items():
        here = layer_of(module)
        for dep in sorted(deps):
            there = layer_of(dep)
            if here is not None and there is not None and there > here:
                upward.append(f"{module} ({LAYERS[here][0]}) imports {dep} ({LAYERS[there][0]})")
    assert not upward, "\n".join(upward)


def test_the_imports_form_no_cycle() -> None:
    # A package's __init__ importing its own modules to re-export them is the package's face, not a cycle: leave
    # out the edges from a package to its own submodules.
    edges = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in read_graph(ROOT).items()}
    cycle = find_cycle(edges)
    assert cycle is None, " -> ".join(cycle or [])


@pytest.mark.parametrize(("code", "expected"), [
    ("def f():\n    from brute_nb.notebook.front.magics import x\n", "brute_nb.notebook.front.magics"),
    ("from brute_nb.notebook.front import magics\n", "brute_nb.notebook.front.magics"),
    ("import brute_nb.notebook.front.magics\n", "brute_nb.notebook.front.magics"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from brute_nb.frames import frame\n", "brute_nb.frames"),
    ("import brute_nb\n\ndef f(log):\n    return brute_nb.frames.frame(log)\n", "brute_nb.frames"),
    ("from ..frames import frame\n", "brute_nb.frames"),
    ("from brute_nb.notebook.views import render\n", "brute_nb.notebook.views.render"),
    ("from brute_nb.notebook.views.render import ToolView\n", "brute_nb.notebook.views.render"),
    ("from ..notebook.views import render\n", "brute_nb.notebook.views.render"),
])
def test_the_reader_sees_every_kind_of_import(tmp_path: Path, code: str, expected: str) -> None:
    source = tmp_path / "probe.py"
    source.write_text(code)
    known = {"brute_nb", "brute_nb.frames", "brute_nb.notebook", "brute_nb.notebook.front.magics", "brute_nb.sessions",
             "brute_nb.notebook.views", "brute_nb.notebook.views.render"}
    assert expected in imported("brute_nb.sessions.probe", source, known)


def test_a_new_top_level_module_is_not_placed_by_the_package_name() -> None:
    assert layer_of("brute_nb.something_new") is None
    assert layer_of("brute_nb") == len(LAYERS) - 1


def test_the_layers_put_each_concern_where_the_architecture_draws_it() -> None:
    assert layer_of("brute_nb.frames") < layer_of("brute_nb.sessions.columns")  # type: ignore[operator]
    assert layer_of("brute_nb.errors") < layer_of("brute_nb.message")  # type: ignore[operator]
    assert layer_of("brute_nb.map.api") < layer_of("brute_nb.notebook.settings")  # type: ignore[operator]
    assert layer_of("brute_nb.map.api") < layer_of("brute_nb.notebook.front.map_api")  # type: ignore[operator]
    assert layer_of("brute_nb.sessions.file") < layer_of("brute_nb.middleware.session_log")  # type: ignore[operator]


@pytest.mark.parametrize(("name", "home"), [
    ("Env", "brute_nb.env"), ("App", "brute_nb.env"), ("JSON", "brute_nb.message"), ("Done", "brute_nb.map.cache"),
    ("Bundle", "brute_nb.notebook.views.render"),
])
def test_a_shared_type_is_declared_in_one_module(name: str, home: str) -> None:
    """A turn's env and what it is awaited through, a JSON value, a map engine's finished-row callback and a
    display bundle are each named by one type, declared once, low enough for every module that uses it (``env`` in
    the foundation, ``message`` among the values), and imported by the rest."""
    declared = sorted(module for module, path in read_modules(ROOT).items() if name in _assigned(path))
    assert declared == [home]


def _assigned(path: Path) -> set[str]:
    """The names a module binds by assignment or a class statement at its top level."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def drawn_layers() -> dict[str, str]:
    """docs/architecture.md's layer table: each layer's name and the text of its row, in the order drawn."""
    table = next(block for block in ARCHITECTURE.read_text().split("```")[1::2] if block.startswith("\nfront ends"))
    rows: dict[str, str] = {}
    for line in table.strip("\n").splitlines():
        name, text = line[:16].strip(), line[16:]
        if name:
            rows[name] = text
        else:
            rows[list(rows)[-1]] += " " + text
    return rows


def test_the_architecture_page_draws_these_layers() -> None:
    """One picture: the page's table names the layers of ``LAYERS`` (top first) and, in each, every module or
    package the layer holds, as a path (``fill.py``, ``map/``, ``notebook/front/``)."""
    drawn = drawn_layers()
    assert list(drawn) == [name for name, _ in reversed(LAYERS)]
    missing = []
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            path = prefix.removeprefix("brute_nb").strip(".").replace(".", "/")
            if path and f"{path}.py" not in drawn[name] and f"{path}/" not in drawn[name]:
                missing.append(f"{path} ({name})")
    assert not missing, "draw these in docs/architecture.md's layer table: " + ", ".join(missing)


def test_the_cycle_finder_finds_a_cycle_hidden_two_steps_away() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
