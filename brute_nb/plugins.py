"""Providers and tools found by name through Python entry points: the route a third-party package takes.

A package registers in its own ``pyproject.toml``::

    [project.entry-points."brute_nb.providers"]
    myco = "myco_brute:provider"    # provider(model: str | None, **options) -> a handler for agent.run

    [project.entry-points."brute_nb.tools"]
    weather = "myco_brute:weather"  # a Tool class or instance, or an @tool function, named "weather"

and once it is installed, ``%%brute -m myco:MODEL`` and ``--tools +weather`` find it. brute_nb's own providers
and tools are declared the same way in its ``pyproject.toml``; ``BUILTIN`` repeats those declarations (a test
checks that the two agree) so the built-ins resolve even when the installed metadata is stale, as it is after an
editable install made before a declaration was added.

Invariants: a built-in name always means the built-in (another package's entry point with the same name is
listed as shadowed and never loaded); nothing is imported until a name is looked up; the entry points are read
again at each lookup, so a plugin ``pip install``-ed into a running kernel is found without a restart.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from brute_nb.errors import BruteError

PROVIDERS = "brute_nb.providers"
TOOLS = "brute_nb.tools"
DISTRIBUTION = "brute_nb"

BUILTIN: dict[str, dict[str, str]] = {
    PROVIDERS: {
        "anthropic": "brute_nb.providers.builtin:anthropic",
        "openai": "brute_nb.providers.builtin:openai",
        "openai-responses": "brute_nb.providers.builtin:openai_responses",
        "ollama": "brute_nb.providers.builtin:ollama",
        "llm": "brute_nb.providers.builtin:llm",
        "gemini": "brute_nb.providers.builtin:gemini",
        "openrouter": "brute_nb.providers.builtin:openrouter",
        "deepseek": "brute_nb.providers.builtin:deepseek",
        "mistral": "brute_nb.providers.builtin:mistral",
    },
    TOOLS: {
        "read": "brute_nb.tools.builtin.fs_read:FSRead",
        "write": "brute_nb.tools.builtin.fs_edit:FSWrite",
        "patch": "brute_nb.tools.builtin.fs_edit:FSPatch",
        "remove": "brute_nb.tools.builtin.fs_edit:FSRemove",
        "fs_search": "brute_nb.tools.builtin.fs_search:FSSearch",
        "undo": "brute_nb.tools.builtin.fs_edit:FSUndo",
        "shell": "brute_nb.tools.builtin.shell:Shell",
        "fetch": "brute_nb.tools.builtin.fetch:Fetch",
        "todo_write": "brute_nb.tools.builtin.todo:TodoWrite",
        "todo_read": "brute_nb.tools.builtin.todo:TodoRead",
        "question": "brute_nb.tools.builtin.question:Question",
        "skill": "brute_nb.tools.builtin.skill:SkillLoad",
        "python": "brute_nb.notebook.python_tool:PYTHON",
        "notebook": "brute_nb.notebook.notebook_tools:NOTEBOOK",
        "variables": "brute_nb.notebook.notebook_tools:VARIABLES",
        "propose_cell": "brute_nb.notebook.notebook_tools:PROPOSE_CELL",
        "edit_cell": "brute_nb.notebook.cell_tools:EDIT_CELL",
        "insert_cell": "brute_nb.notebook.cell_tools:INSERT_CELL",
        "run_cell": "brute_nb.notebook.cell_tools:RUN_CELL",
    },
}
"""Group -> name -> ``module:attribute``: exactly the ``[project.entry-points]`` of brute_nb's pyproject.toml."""


class PluginError(BruteError):
    """An installed plugin failed to load; the message names it and the package that registered it."""


@dataclass(frozen=True)
class Plugin:
    name: str
    value: str
    """Where it lives, ``module:attribute``."""
    distribution: str
    shadowed: bool = False
    """Another package registered a built-in's name: listed, never loaded."""


def _entry_points(group: str) -> list[metadata.EntryPoint]:
    """Other packages' entry points in ``group`` (brute_nb's own come from ``BUILTIN``, never from metadata)."""
    return [ep for ep in metadata.entry_points(group=group) if _distribution(ep) != DISTRIBUTION]


def _distribution(ep: metadata.EntryPoint) -> str:
    dist = ep.dist
    return re.sub(r"[-_.]+", "_", dist.name).lower() if dist is not None else "?"


def installed(group: str) -> list[Plugin]:
    """Every plugin in ``group``: brute_nb's built-ins first, then each other package's, in install order."""
    builtin = BUILTIN[group]
    found = [Plugin(name, value, DISTRIBUTION) for name, value in builtin.items()]
    seen = set(builtin)
    for ep in _entry_points(group):
        found.append(Plugin(ep.name, ep.value, _distribution(ep), shadowed=ep.name in seen))
        seen.add(ep.name)
    return found


def names(group: str) -> list[str]:
    """The names ``group`` answers to (shadowed registrations left out)."""
    return [p.name for p in installed(group) if not p.shadowed]


def load(group: str, name: str) -> Any | None:
    """What ``name`` is registered as in ``group`` (its module imported now), or None when nothing is."""
    value = BUILTIN[group].get(name)
    if value is not None:
        module, _, attribute = value.partition(":")
        target: Any = importlib.import_module(module)
        for part in attribute.split("."):
            target = getattr(target, part)
        return target
    for ep in _entry_points(group):
        if ep.name == name:
            try:
                return ep.load()
            except Exception as exc:
                raise PluginError(f"the {group} plugin {name!r} ({ep.value}, installed by "
                                  f"{_distribution(ep)}) failed to load: {type(exc).__name__}: {exc}. "
                                  f"Reinstall or remove that package") from exc
    return None
