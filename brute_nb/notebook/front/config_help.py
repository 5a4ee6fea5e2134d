"""``%brute config?``: how settings are set and put back, each with its default.

IPython reads a line ending in ``?`` as a help request for its last word, so ``%brute config?`` showed IPython's own
``%config`` magic. While brute_nb is loaded, a cleanup transformer (IPython's documented hook,
``shell.input_transformers_cleanup``, run before the help suffix is read) turns a one-line ``%brute WORD?`` into
``%brute help WORD``. The text is made from the settings' own table and defaults, so it cannot drift from them.
"""

from __future__ import annotations

import re
from typing import Any

from brute_nb.notebook import settings as st
from brute_nb.transports import server_tool_names

_ASKED = re.compile(r"\s*%brute\s+(\w+)\s*\?{1,2}\s*")
"""``%brute config?``, ``%brute config ?`` and ``??``: help on a subcommand, asked IPython's way."""

NONE_SAYS = {"tools": "none: no tools", "api_key": "none: a server that takes no key"}
"""The settings whose ``none`` is a value of its own, not their default."""

UNSET_SAYS = {"notebook": "found for you", "model": "the environment's keys pick one", "system": "brute_nb's",
              "root": "the notebook's folder", "api_key": "the environment's key for the host",
              "stall_timeout": "BRUTE_STALL_TIMEOUT, else 90 s", "approve": "brute_nb's policy",
              "confirm_above": "a map never asks",
              "server_tools": f"none; name,name of {server_tool_names.summary()}"}
"""What a setting whose default is nothing set does then, where that is something."""


def text() -> str:
    """The help: how to list, set and put back a setting, then every setting with its default."""
    rows = []
    for key in st.KEYS:
        default = shown(st.default_of(key))
        note = "" if key in st.NONE_CLEARS else f"; {NONE_SAYS.get(key, 'no none')}"
        rows.append(f"  {key} ({UNSET_SAYS.get(key, default) if default == 'none' else default}{note})")
    return "\n".join([
        "%brute config                 list the current session's settings (and the kernel's: notebook, debug)",
        "%brute config KEY=VALUE ...   change them (quote a value with spaces: system=\"be brief\"); the same keys go",
        "                              to brute_nb.configure(KEY=VALUE), and most to %%brute --KEY VALUE",
        "KEY=default, or KEY=          put a setting back to its default",
        "KEY=none (or off)             the same, where none is nothing set; tools=none is no tools and",
        "                              api_key=none a server that takes no key; a setting that always holds a",
        "                              number or true/false has no none",
        "settings (default):",
        *rows,
    ])


def shown(value: Any) -> str:
    """A default as a user would type it: nothing set is ``none``."""
    if value is None or value == {} or value == ():
        return "none"
    return str(value).lower() if isinstance(value, bool) else str(value)


def asked(lines: list[str]) -> list[str]:
    """A cell that is one ``%brute WORD?`` line becomes ``%brute help WORD``; any other cell is left as it is."""
    code = [line for line in lines if line.strip()]
    if len(code) == 1 and (found := _ASKED.fullmatch(code[0])):
        return [f"%brute help {found.group(1)}\n"]
    return lines


def install(ipython: Any) -> None:
    cleanup = ipython.input_transformers_cleanup
    if asked not in cleanup:
        cleanup.append(asked)


def uninstall(ipython: Any) -> None:
    cleanup = ipython.input_transformers_cleanup
    if asked in cleanup:
        cleanup.remove(asked)
