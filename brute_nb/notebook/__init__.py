"""The notebook layer: magics, runner, display, widget. A view over the core; the core never imports it."""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    from brute_nb.notebook import cells, short_errors
    from brute_nb.notebook.magics import BruteMagics
    from brute_nb.notebook.registry import install

    registry = install(ipython)
    registry.error_recorder = cells.install(ipython)
    ipython.register_magics(BruteMagics(ipython, registry))
    short_errors.install(ipython, debug=lambda: registry.debug)
    # Off the load path: importing the tools and walking the overflow folder would slow %load_ext.
    threading.Thread(target=_clean_overflow, name="brute-cleanup", daemon=True).start()


def unload_ipython_extension(ipython: Any) -> None:
    from brute_nb.notebook import cells, short_errors
    from brute_nb.notebook.registry import registry, uninstall

    cells.uninstall(ipython, registry().error_recorder)
    short_errors.uninstall(ipython)
    magics = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        magics[kind].pop("brute", None)
    ipython.magics_manager.registry.pop("BruteMagics", None)
    uninstall()
    mcp = sys.modules.get("brute_nb.tools.mcp_tools")
    if mcp is not None:
        mcp.stop_all()  # the MCP servers this kernel started end with the extension


def _clean_overflow() -> None:
    """Tool-output overflow files older than 7 days go at load; never fatal."""
    from brute_nb.tools.truncation import cleanup

    with contextlib.suppress(OSError):
        cleanup()
