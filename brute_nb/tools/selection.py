"""A tool selection read as the user writes it: ``all``, ``read-only``, ``none``, names (``read,fs_search``),
``+name`` (all and that one), or a tuple mixing such names with the user's own tools.

Names are found through ``brute_nb.plugins`` (the built-ins, tools a package registers, and those a front end
registered, such as the kernel's). A map row and a notebook agent read ``--tools`` with this one function; the
notebook adds its own tools to the sets ``all`` and ``read-only`` (``extra``, ``extra_read_only``). The invariant:
an unknown name, a plugin that is not the tool it claims, or two different tools with one name is refused with
every name listed, before any turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brute_nb.errors import SettingsError


def select_tools(spec: str | tuple[Any, ...], *, extra: Sequence[Any] = (),
                 extra_read_only: Sequence[Any] = ()) -> list[Any]:
    """The tools ``spec`` names: ``("all", weather)`` is every built-in plus ``weather``; ``extra`` joins ``all``
    and ``extra_read_only`` joins ``read-only``."""
    if isinstance(spec, str):
        return _named(spec, extra, extra_read_only)
    chosen: list[Any] = []
    for item in spec:
        chosen.extend(_named(item, extra, extra_read_only) if isinstance(item, str) else [item])
    names: dict[str, Any] = {}
    clashes = []
    for tool in chosen:
        if tool.name in names and names[tool.name] is not tool:
            clashes.append(tool.name)
        names.setdefault(tool.name, tool)
    if clashes:
        raise SettingsError(f"tools: two different tools are named {', '.join(sorted(set(clashes)))}; rename "
                            "yours (tool names must be unique, built-ins included)")
    return list(names.values())


def _named(spec: str, extra: Sequence[Any], extra_read_only: Sequence[Any]) -> list[Any]:
    """The sets (``all``, ``read-only``, ``none``) and, by name, every tool ``brute_nb.plugins`` finds."""
    from brute_nb import plugins, tools

    names = [s.strip() for s in spec.split(",") if s.strip()]
    every = [*tools.ALL, *extra]
    read_only = [*tools.READ_ONLY, *extra_read_only]
    chosen: list[Any] = []
    unknown = []
    for name in names:
        if name == "all":
            chosen.extend(every)
        elif name == "read-only":
            chosen.extend(read_only)
        elif name == "none":
            continue
        else:
            key = name.lstrip("+")
            if name.startswith("+") and not chosen:
                chosen.extend(every)
            found = _plugin(key)
            if found is None:
                unknown.append(key)
            else:
                chosen.append(found)
    if unknown:
        available = ", ".join(sorted(plugins.names(plugins.TOOLS)))
        raise SettingsError(f"--tools: unknown tool {', '.join(unknown)}; available: {available}")
    seen: dict[str, Any] = {}
    for tool in chosen:
        seen.setdefault(tool.name, tool)
    return list(seen.values())


def _plugin(key: str) -> Any:
    """The tool registered as ``key`` (None when there is none), refused when it is not a tool of that name."""
    from brute_nb import plugins

    try:
        tool = plugins.load(plugins.TOOLS, key)
    except plugins.PluginError as exc:
        raise SettingsError(f"--tools: {exc}") from None
    if tool is not None and getattr(tool, "name", None) != key:
        raise SettingsError(f"--tools: the plugin {key!r} is a {type(tool).__name__} named "
                            f"{getattr(tool, 'name', None)!r}; a brute_nb.tools entry point must be a tool "
                            "with the entry point's name (ask its package's author to fix it)")
    return tool
