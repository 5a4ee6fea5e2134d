"""The notebook layer: the kernel-resident agent and its front ends. A view over the core; the core never imports it.

Inside it, imports go one way, down this list (a module may import any module of its own layer or a lower one,
never a higher one, and no cycle is hidden behind a function-level import; ``tests/notebook/test_import_layers.py``
checks every import, function-level and ``TYPE_CHECKING`` ones included):

1. leaves         ``paths`` (where sessions live), ``render`` (pure MIME bundles), ``coalesce``, ``thumbnails``,
                  ``chat_input``, ``prompt`` ({expr} filling, value summaries), ``short_errors``, ``warm`` (the
                  SDK's imports in the background after ``%load_ext``), ``live`` (the streaming view's widget),
                  ``transcript`` (the chat's transcript widget and its "Insert as cell" buttons), ``chat_static``
                  (the panel's static copy, shown where the widget cannot render), ``structured_view`` (a
                  ``--schema`` reply as tables or indented JSON), ``frame_view`` (log frames' text as text),
                  ``namespace_watch`` (what code did to a namespace: names bound, deleted, changed in place)
                  ``turn_model`` (what one turn says, apart from the views that render it)
2. settings       ``settings`` (the one parser and validator of every option), ``approvals`` (the policy it checks)
3. kernel tools   ``cells`` (In/Out/Err), ``python_tool``, ``notebook_tools``, ``cell_tools`` (edit, insert and
                  run cells) over ``ipynb_cells`` (a saved notebook through nbformat) or ``cell_bridge`` (the live
                  document in JupyterLab), ``environment`` (the system prompt's <env> and project rules): what
                  the stack adds; ``kernel_journal`` (per turn, what the agent's code did to the namespace) and
                  ``turn_undo`` (a whole turn's variables, files and cells put back)
4. stack          ``stack``: the agent's middleware stack, built from settings and values
5. turn views     ``display``, ``terminal`` (a turn's model shown in a cell or a terminal), ``runner`` (one turn on the
                  kernel's loop, with its view); they drive any object with a session's shape (``runner.Session``);
                  ``transcript_html`` (messages as the chat transcript shows them, HTML and plain text)
6. session        ``session``: ``NotebookAgent``, one session beside a notebook: settings, stack, log, forks
7. cell commands  ``cell_turn`` (a cell's turn: context, ``Err``, ``--code``), ``model_commands`` (alias, models),
                  ``export`` (a session as Markdown, HTML or a notebook), ``provenance`` (``%brute why NAME``)
8. registry       ``registry``: the kernel's sessions and which is current; applies settings (``configure``)
9. front ends      ``magics``, ``widget``, ``api`` (``brute_nb.chat/configure/current``), ``fix_button`` (under a
                  failing cell's error), this package's hooks

A lower layer that needs something from above gets it handed down: the session tells its registry about a fork
through ``on_fork``, ``short_errors`` gets its debug switch at install, the notebook tool reads the notebook's
path from the turn's env, and ``Err``'s recorder is found among the shell's own hooks.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    from brute_nb.notebook import cells, frame_view, short_errors
    from brute_nb.notebook.magics import BruteMagics
    from brute_nb.notebook.registry import install

    registry = install(ipython)
    registry.error_recorder = cells.install(ipython)
    registry.error_recorder.on_error = lambda error, cell_id: _offer_fix(ipython, error, cell_id)
    ipython.register_magics(BruteMagics(ipython, registry))
    short_errors.install(ipython, debug=lambda: registry.debug)
    frame_view.register(ipython)
    # Off the load path: importing the tools and walking the overflow folder would slow %load_ext.
    threading.Thread(target=_clean_overflow, name="brute-cleanup", daemon=True).start()
    from brute_nb.notebook import warm

    warm.start()  # the model SDK's imports, while the user types the first %%brute cell


def _offer_fix(ipython: Any, error: Any, cell_id: str | None) -> None:
    from brute_nb.notebook.fix_button import offer

    offer(ipython, error, cell_id)


def unload_ipython_extension(ipython: Any) -> None:
    from brute_nb.notebook import cells, frame_view, short_errors
    from brute_nb.notebook.registry import registry, uninstall

    cells.uninstall(ipython, registry().error_recorder)
    short_errors.uninstall(ipython)
    frame_view.unregister(ipython)
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
