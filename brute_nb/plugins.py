"""Providers and tools found by name: brute_nb's own, registered from a table in code, and a third party's, found
through Python entry points.

A package registers in its own ``pyproject.toml``::

    [project.entry-points."brute_nb.providers"]
    myco = "myco_brute:provider"    # provider(model: str | None, **options) -> a handler for agent.run

    [project.entry-points."brute_nb.tools"]
    weather = "myco_brute:weather"  # a Tool class or instance, or an @tool function, named "weather"

and once it is installed, ``%%brute -m myco:MODEL`` and ``--tools +weather`` find it. brute_nb's own providers
and tools are the same kind of record, ``name = "module:attribute"``, written once in ``BUILTINS`` below and
registered through ``register`` (simonw/llm's ``DEFAULT_PLUGINS``); the kernel's tools (``python``, the notebook
and cell tools) are registered the same way by ``%load_ext`` (``brute_nb.notebook.kernel_tools.register``), so
this core module names no notebook module. Both kinds are listed as a ``Plugin`` and loaded by ``_load``, by an
entry point's rules. Nothing reads ``pyproject.toml``: its entry points are for other packages.

Invariants: a built-in name always means the built-in (another package's entry point with the same name is
listed as shadowed and never loaded); nothing is imported until a name is looked up, not even
``importlib.metadata`` (``%load_ext`` registers the kernel's tools and must stay light); the entry points are read
again at each lookup, so a plugin ``pip install``-ed into a running kernel is found without a restart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brute_nb.errors import BruteError
from brute_nb.providers.factories import FACTORIES

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

PROVIDERS = "brute_nb.providers"
TOOLS = "brute_nb.tools"
PROFILES = "brute_nb.profiles"
"""A third party's provider profile (``providers.profiles.Profile``); brute_nb's own are ``providers.profiles``'
table, so this group has no built-ins."""
DISTRIBUTION = "brute_nb"

BUILTINS: dict[str, dict[str, str]] = {
    PROVIDERS: dict(FACTORIES),
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
    },
}
"""The core's built-ins, by group: name -> ``module:attribute``, the form of an entry point's value. The providers'
are ``providers.factories``' table, where the vendors are named."""

_registered: dict[str, dict[str, str]] = {PROVIDERS: {}, TOOLS: {}, PROFILES: {}}


class PluginError(BruteError):
    """An installed plugin failed to load; the message names it and the package that registered it."""


def register(group: str, name: str, value: str) -> None:
    """Make ``name`` in ``group`` mean brute_nb's ``value`` (``module:attribute``, imported at its first lookup).

    Registering the same value again does nothing (``%load_ext`` may run twice); another value for a registered
    name is a mistake in brute_nb, refused here rather than found as the wrong tool later."""
    if group not in _registered:
        raise BruteError(f"plugins.register: unknown group {group!r}; use one of {', '.join(_registered)}")
    known = _registered[group].setdefault(name, value)
    if known != value:
        raise BruteError(f"plugins.register: {group} {name!r} is already {known!r}, not {value!r}")


for _group, _table in BUILTINS.items():
    for _name, _value in _table.items():
        register(_group, _name, _value)


def builtin(group: str) -> dict[str, str]:
    """brute_nb's own registrations in ``group`` (name -> ``module:attribute``): ``BUILTINS``, plus the kernel's
    tools once ``%load_ext`` registered them."""
    return dict(_registered[group])


@dataclass(frozen=True)
class Plugin:
    name: str
    value: str
    """Where it lives, ``module:attribute``."""
    distribution: str
    shadowed: bool = False
    """Another package registered a built-in's name: listed, never loaded."""


def _load(group: str, plugin: Plugin) -> Any:
    """What ``plugin.value`` names, its module imported now: the one loader for built-ins and entry points alike
    (an entry point's own rules: ``module:attribute.path`` or a bare module).

    A built-in that fails to load is a bug in brute_nb and raises as it is; another package's failure is a
    ``PluginError`` naming that package."""
    from importlib import metadata

    try:
        return metadata.EntryPoint(plugin.name, plugin.value, group).load()
    except Exception as exc:
        if plugin.distribution == DISTRIBUTION:
            raise
        raise PluginError(f"the {group} plugin {plugin.name!r} ({plugin.value}, installed by {plugin.distribution}) "
                          f"failed to load: {type(exc).__name__}: {exc}. Reinstall or remove that package") from exc


def _entry_points(group: str) -> list[EntryPoint]:
    """Other packages' entry points in ``group``, read now. brute_nb's own come from ``BUILTINS``; metadata left by
    an older install of brute_nb, which declared them as entry points, is not read as a third party's."""
    from importlib import metadata

    return [ep for ep in metadata.entry_points(group=group) if _distribution(ep) != DISTRIBUTION]


def _distribution(ep: EntryPoint) -> str:
    dist = ep.dist
    return re.sub(r"[-_.]+", "_", dist.name).lower() if dist is not None else "?"


def _third_parties(group: str, taken: set[str]) -> list[Plugin]:
    found = []
    for ep in _entry_points(group):
        found.append(Plugin(ep.name, ep.value, _distribution(ep), shadowed=ep.name in taken))
        taken.add(ep.name)
    return found


def installed(group: str) -> list[Plugin]:
    """Every plugin in ``group``: brute_nb's built-ins first, then each other package's, in install order."""
    own = builtin(group)
    return [Plugin(name, value, DISTRIBUTION) for name, value in own.items()] + _third_parties(group, set(own))


def names(group: str) -> list[str]:
    """The names ``group`` answers to (shadowed registrations left out)."""
    return [p.name for p in installed(group) if not p.shadowed]


def load(group: str, name: str) -> Any | None:
    """What ``name`` is registered as in ``group`` (its module imported now), or None when nothing is.

    A built-in is found without reading any package's metadata."""
    value = _registered[group].get(name)
    if value is not None:
        return _load(group, Plugin(name, value, DISTRIBUTION))
    for plugin in _third_parties(group, set(_registered[group])):
        if plugin.name == name and not plugin.shadowed:
            return _load(group, plugin)
    return None
