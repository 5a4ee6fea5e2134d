"""The kernel's sessions: one NotebookAgent per (notebook, session name), and which one is current.

It lives as long as the extension is loaded (``%unload_ext`` drops it). It is the only module-level state the
notebook layer keeps; the core keeps a few more, each process-wide on purpose: ``tools/context.py`` (the env a
tool call runs in, and the default one for direct calls), ``tools/stores.py`` (one file-mutation queue),
``event_loop.py`` (the shared event-loop thread) and ``tools/mcp_tools.py`` (running MCP servers by owner). Importing
it is cheap (``%load_ext`` installs it): the kernel agent, and with it the whole
agent stack, is imported when the first session is asked for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brute_nb.notebook.settings import Settings, parse_settings

if TYPE_CHECKING:
    from brute_nb.notebook.session import NotebookAgent


class Registry:
    def __init__(self, shell: Any = None) -> None:
        self.shell = shell
        self.agents: dict[tuple[Path, str], NotebookAgent] = {}
        self.current_name = "default"
        self.settings = Settings()
        self.debug = False
        """``%brute config debug=true``: brute_nb's errors show their full traceback in the cell."""
        self._location: Any = None
        self.error_recorder: Any = None
        """The ``post_run_cell`` hook filling ``Err`` (``cells.ErrorRecorder``), removed at unload."""
        self.last_host: tuple[str, str] | None = None
        self.beside: dict[str, Any] = {}
        """The chat panels open in JupyterLab's side area (sidecar widgets), by session: a second one replaces it."""
        """(session, host) of the last turn, from any front end (``crossing``)."""

    @property
    def location(self) -> Any:
        """Where the notebook is (and which rule said so); resolved once, again after ``config notebook=``."""
        if self._location is None:
            from brute_nb.notebook.paths import locate_notebook

            user_ns = getattr(self.shell, "user_ns", None) or {}
            self._location = locate_notebook(self.settings.notebook, user_ns)
        return self._location

    def relocate(self) -> None:
        self._location = None

    def get(self, name: str | None = None) -> NotebookAgent:
        from brute_nb.notebook.paths import session_path
        from brute_nb.notebook.session import NotebookAgent  # the agent stack loads with the first session

        name = name or self.current_name
        loc = self.location
        path = session_path(loc, name)
        key = (path, name)
        nb = self.agents.get(key)
        if nb is None:
            nb = NotebookAgent(name, path, settings=self.starting_settings(loc), notebook=loc.path)
            nb.on_fork = self.adopt  # a fork of a kernel session becomes the current one
            nb.host_line = self.crossing
            self.agents[key] = nb
        return nb

    def starting_settings(self, loc: Any) -> Settings:
        """The settings a new session starts from: the current session's, as the user left them (its model, its
        server and that server's key), so a second session goes on talking to the same host rather than to the
        provider's public one with the environment's key. Its own cassette (replay, record) is not handed on: two
        sessions cannot go on from one place in it."""
        from brute_nb.notebook.paths import session_path

        current = self.agents.get((session_path(loc, self.current_name), self.current_name))
        if current is None:
            return self.settings
        return dataclasses.replace(current.settings, replay=None, record=None)

    def crossing(self, nb: NotebookAgent) -> str | None:
        """One line when this session's turn goes to another host than the last turn of another session did
        (``--base-url`` or the environment differ between them), so a host never changes silently; None otherwise.
        Each call records the host this turn goes to."""
        host = nb.host()
        if host is None:
            return None
        last, self.last_host = self.last_host, (nb.name, host)
        if last is None or last[0] == nb.name or last[1] == host:
            return None
        return f"session {nb.name} sends to {host} (session {last[0]} sent to {last[1]})"

    def configure(self, options: Mapping[str, Any], session: str | None = None) -> NotebookAgent:
        """What ``%%brute`` options, ``%brute config k=v``, ``brute_nb.configure`` and ``brute_nb.chat`` share:
        every value parsed and checked at once (``parse_settings``), then the kernel's settings (notebook, debug)
        applied here and the rest to the session (``session``, default the current one), which it returns."""
        changes = parse_settings(options)
        if "notebook" in changes:
            self.settings = self.settings.updated(notebook=changes.pop("notebook"))
            self.relocate()
        if "debug" in changes:  # the kernel's, not a session's: it is about how errors show
            self.debug = changes.pop("debug")
        nb = self.current() if session is None else self.get(session)
        if changes:
            nb.configure(**changes)
        return nb

    def use(self, name: str) -> NotebookAgent:
        nb = self.get(name)
        self.current_name = name
        return nb

    def adopt(self, nb: NotebookAgent) -> NotebookAgent:
        nb.on_fork = self.adopt
        nb.host_line = self.crossing
        self.agents[(nb.session_path, nb.name)] = nb
        self.current_name = nb.name
        return nb

    def current(self) -> NotebookAgent:
        return self.get(self.current_name)


_registry: Registry | None = None


def registry() -> Registry:
    """The loaded extension's registry, or a standalone one for plain Python use."""
    global _registry
    if _registry is None:
        _registry = Registry()
    return _registry


def install(shell: Any) -> Registry:
    global _registry
    _registry = Registry(shell)
    return _registry


def uninstall() -> None:
    """The extension unloads: its sessions' model clients close (their connections would outlive it)."""
    global _registry
    if _registry is not None:
        for nb in list(_registry.agents.values()):
            nb.close()
    _registry = None


def current() -> NotebookAgent:
    """The kernel's current session agent (``.ask``, ``.log``, ``.df``, ``.undo``, ...)."""
    return registry().current()
