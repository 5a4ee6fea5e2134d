"""Providers and tools found by name through Python entry points: the route a third-party package takes.

A package registers in its own ``pyproject.toml``::

    [project.entry-points."brute_nb.providers"]
    myco = "myco_brute:provider"    # provider(model: str | None, **options) -> a handler for agent.run

    [project.entry-points."brute_nb.tools"]
    weather = "myco_brute:weather"  # a Tool class or instance, or an @tool function, named "weather"

and once it is installed, ``%%brute -m myco:MODEL`` and ``--tools +weather`` find it. brute_nb's own providers
and tools are declared the same way in its ``pyproject.toml``, the one table of built-ins: read from the file itself
in a checkout (so an editable install made before a declaration was added still finds it) and from the installed
metadata otherwise.

Invariants: a built-in name always means the built-in (another package's entry point with the same name is
listed as shadowed and never loaded); nothing is imported until a name is looked up; the entry points are read
again at each lookup, so a plugin ``pip install``-ed into a running kernel is found without a restart.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from brute_nb.errors import BruteError

PROVIDERS = "brute_nb.providers"
TOOLS = "brute_nb.tools"
DISTRIBUTION = "brute_nb"

SOURCE = Path(__file__).resolve().parent.parent / "pyproject.toml"
"""brute_nb's own ``pyproject.toml`` when it runs from a checkout (an editable install): read first, so a built-in
declared there is found even when the installed metadata predates it."""


def builtin(group: str) -> dict[str, str]:
    """brute_nb's own registrations in ``group`` (name -> ``module:attribute``), from the one table: the
    ``[project.entry-points]`` of its ``pyproject.toml`` (in a checkout) or of its installed metadata (a wheel)."""
    return dict(_builtin_table().get(group, {}))


def _builtin_table() -> dict[str, dict[str, str]]:
    try:
        stamp = SOURCE.stat().st_mtime_ns
    except OSError:
        stamp = None
    if _cache and _cache[0][0] == stamp:
        return _cache[0][1]
    table = _from_source() if stamp is not None else None
    if table is None:
        table = _from_metadata()
    _cache[:] = [(stamp, table)]
    return table


_cache: list[tuple[int | None, dict[str, dict[str, str]]]] = []
"""The table read last and the pyproject.toml's mtime it was read at (None: read from the metadata)."""


def _from_source() -> dict[str, dict[str, str]] | None:
    import tomllib

    try:
        project = tomllib.loads(SOURCE.read_text(encoding="utf-8")).get("project", {})
    except (OSError, ValueError):
        return None
    if project.get("name") != DISTRIBUTION:  # a pyproject.toml that is not ours (brute_nb installed inside a project)
        return None
    points = project.get("entry-points", {})
    return {group: dict(points.get(group, {})) for group in (PROVIDERS, TOOLS)}


def _from_metadata() -> dict[str, dict[str, str]]:
    try:
        points = metadata.distribution(DISTRIBUTION).entry_points
    except metadata.PackageNotFoundError:
        points = metadata.EntryPoints([])
    return {group: {ep.name: ep.value for ep in points.select(group=group)} for group in (PROVIDERS, TOOLS)}


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
    """Other packages' entry points in ``group`` (brute_nb's own come from ``builtin``, the one table)."""
    return [ep for ep in metadata.entry_points(group=group) if _distribution(ep) != DISTRIBUTION]


def _distribution(ep: metadata.EntryPoint) -> str:
    dist = ep.dist
    return re.sub(r"[-_.]+", "_", dist.name).lower() if dist is not None else "?"


def installed(group: str) -> list[Plugin]:
    """Every plugin in ``group``: brute_nb's built-ins first, then each other package's, in install order."""
    own = builtin(group)
    found = [Plugin(name, value, DISTRIBUTION) for name, value in own.items()]
    seen = set(own)
    for ep in _entry_points(group):
        found.append(Plugin(ep.name, ep.value, _distribution(ep), shadowed=ep.name in seen))
        seen.add(ep.name)
    return found


def names(group: str) -> list[str]:
    """The names ``group`` answers to (shadowed registrations left out)."""
    return [p.name for p in installed(group) if not p.shadowed]


def load(group: str, name: str) -> Any | None:
    """What ``name`` is registered as in ``group`` (its module imported now), or None when nothing is."""
    value = builtin(group).get(name)
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
