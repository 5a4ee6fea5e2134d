"""The notebook layer: the kernel-resident agent and its front ends. A view over the core; the core never imports it.

Inside it, imports go one way, down this list, each folder one layer (a module may import any module of its own
layer or a lower one, never a higher one, and no cycle is hidden behind a function-level import;
``tests/notebook/test_import_layers.py`` checks every import, function-level and ``TYPE_CHECKING`` ones included):

1. leaves         ``paths`` (where sessions live), ``warm`` (the SDK's imports in the background after
                  ``%load_ext``)
2. ``views/``     how a turn and a chat are shown: ``turn_model`` (what one turn says, apart from the views that
                  render it), ``display`` and ``terminal`` (a turn's model shown in a cell or a terminal),
                  ``transcript_html`` (messages as the chat transcript shows them, HTML and plain text), ``render``
                  (pure MIME bundles), ``tool_row`` (one tool row's model) and its renderers, one a form:
                  ``tool_html``, ``tool_markdown``, ``tool_text`` (plain text and the terminal's line),
                  ``coalesce``, ``thumbnails``, ``live`` (the streaming view's widget),
                  ``transcript`` (the chat's transcript widget and its "Insert as cell" buttons), ``chat_input``,
                  ``chat_static`` (the panel's static copy, shown where the widget cannot render),
                  ``structured_view`` (a ``--schema`` reply as tables or indented JSON), ``frame_view`` (log
                  frames' text as text), ``short_errors``, ``key_entry`` (the box to paste a key, in a cell or the chat)
3. settings       ``settings`` (the one parser and validator of every option), ``approvals`` (the policy it checks)
4. ``kernel_tools/`` ``cells`` (In/Out/Err), ``python_tool`` and ``cell_tools`` (edit, insert and
                  run cells) over ``ipynb_cells`` (a saved notebook through nbformat) or ``cell_bridge`` (the live
                  document in JupyterLab), a run numbered as a person's by ``run_count``, both seeing what code
                  shows through ``capture`` (per thread: stdout, stderr, displays), ``notebook_tools``,
                  ``environment`` (the system prompt's <env> and project rules): what the stack adds;
                  ``kernel_journal`` (per turn, what the agent's code did to the namespace, seen by
                  ``namespace_watch``) and ``turn_undo`` (a whole turn's variables, files and cells put back)
5. stack          ``stack``: the agent's middleware stack, built from settings and values
6. turn           ``runner``: one turn on the kernel's loop, with its view; it drives any object with a session's
                  shape (``runner.Session``)
7. session        ``session``: ``NotebookAgent``, one session beside a notebook: settings, stack, log, forks
8. ``commands/``  ``cell_turn`` (a cell's turn: context, ``Err``, ``--code``), ``model_commands`` (alias, models),
                  ``export`` (a session as Markdown, HTML or a notebook), ``provenance`` (``%brute why NAME``)
9. registry       ``registry``: the kernel's sessions and which is current; applies settings (``configure``);
                  ``preload`` (the current session's file read ahead by the warm-up, handed down at load)
10. ``front/``    ``magics`` (its line magic's ``subcommands``, one table of functions), ``widget``, ``side``
                  (the chat panel in JupyterLab's side area), ``api`` (``brute_nb.chat/configure/current``),
                  ``map_api`` (the map engine driven by the kernel's settings: ``brute_nb.map/estimate/compare``),
                  ``fix_button`` (under a failing cell's error), ``key_box`` (a key pasted where the first cell
                  found none), ``load_again`` (a second ``%load_ext`` says nothing), ``config_help``
                  (``%brute config?``); and this package's hooks

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
    from brute_nb.notebook import kernel_tools
    from brute_nb.notebook.front import config_help, load_again, map_api
    from brute_nb.notebook.front.magics import BruteMagics
    from brute_nb.notebook.kernel_tools import cells
    from brute_nb.notebook.registry import install
    from brute_nb.notebook.views import frame_view, short_errors

    kernel_tools.register()  # the kernel's tools by name (names only: nothing of them is imported)
    map_api.install()  # every map run in this kernel takes its settings (the engine itself is not imported)
    registry = install(ipython)
    registry.error_recorder = cells.install(ipython)
    registry.error_recorder.on_error = lambda error, cell_id: _offer_fix(ipython, error, cell_id)
    ipython.register_magics(BruteMagics(ipython, registry))
    short_errors.install(ipython, debug=lambda: registry.debug)
    frame_view.register(ipython)
    load_again.install(ipython)
    config_help.install(ipython)
    # Off the load path: importing the tools and walking the overflow folder would slow %load_ext.
    threading.Thread(target=_clean_overflow, name="brute-cleanup", daemon=True).start()
    from brute_nb.notebook import preload, warm

    warm.start(ahead=preload.current_session)  # the SDK's imports and the session's file, while the user types
    _open_cell_bridge(ipython)


def _open_cell_bridge(ipython: Any) -> None:
    """Where a person may be looking (a kernel whose client allows stdin), the cell tools' bridge now, made off
    the load path (anywidget's import is not light), so the notebook's front end has said which cells it holds
    before a turn edits one (``cell_bridge``)."""
    kernel = getattr(ipython, "kernel", None)
    if kernel is not None and getattr(kernel, "_allow_stdin", False):  # approvals.stdin_available, unimported
        threading.Thread(target=_cell_bridge_now, name="brute-cell-bridge", daemon=True).start()


def _cell_bridge_now() -> None:
    from brute_nb.notebook.kernel_tools.cell_bridge import CellBridge, front

    bridge: CellBridge | None = front()
    if bridge is not None:
        bridge.open()


def _offer_fix(ipython: Any, error: Any, cell_id: str | None) -> None:
    from brute_nb.notebook.front.fix_button import offer

    offer(ipython, error, cell_id)


def unload_ipython_extension(ipython: Any) -> None:
    from brute_nb.notebook.front import config_help, load_again
    from brute_nb.notebook.kernel_tools import cells
    from brute_nb.notebook.registry import registry, uninstall
    from brute_nb.notebook.views import frame_view, short_errors

    load_again.uninstall(ipython)
    config_help.uninstall(ipython)
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
