"""What a map run takes from whoever drives it: ``MapContext``. The engine imports nothing of the notebook.

A run needs a folder to save its rows in, the defaults for what the call leaves out (model, root, approvals,
cassette, ``confirm_above``), how tool names are read, and who may be asked to confirm a cost. The notebook's front
door (``notebook/front/map_api.py``) builds one from the kernel's settings at every call and installs that builder
here (``drive``); anywhere else (plain Python, a Dask worker) a run gets ``default_context()``. Either way the
engine reads the context, never the kernel, so the layers stay one-way (``tests/core/test_package_layers.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brute_nb.errors import SettingsError

Ask = Callable[[str], str]
Select = Callable[[str], list[Any]]

DEFAULT_FOLDER = "notebook.brute"
"""Where a run saves its rows by default: ``<cwd>/notebook.brute``, the folder a kernel that cannot find its
notebook uses too (``notebook.paths``' last rule), so a script and a kernel in one folder share a map's cache."""


def read_tools(spec: str) -> list[Any]:
    """The core's reading of ``tools=``: the default context's, and a Dask worker's."""
    from brute_nb.tools.selection import select_tools

    return select_tools(spec)


def terminal() -> Ask | None:
    """``input`` when a person is at a terminal, else None (nobody can answer: a batch job, a worker)."""
    return input if sys.stdin is not None and sys.stdin.isatty() else None


@dataclass(frozen=True)
class MapContext:
    sessions: Path
    """The ``<stem>.brute`` folder: runs are saved under ``map/``, comparisons under ``compare/``; its parent (the
    notebook's folder) is the root every file a run reads or writes is confined to."""
    model: str | None = None
    """``provider:model`` for a run that names none (None: ``providers.auto`` picks one from the environment)."""
    root: Path | None = None
    """The workspace root of a run's tools, when the call gives none."""
    approve: tuple[tuple[str, str], ...] = ()
    replay: Path | None = None
    record: Path | None = None
    confirm_above: float | None = None
    """USD: a run whose estimate may cost more asks first (None, or infinity, never asks)."""
    session_model: Callable[[], Any] | None = None
    """The driving session's own model call, for a run on its cassette (``replay``/``record``): a cassette is one
    connection's traffic in order, so an in-process run goes through the session's provider, not a new one."""
    select: Select = field(default=read_tools)
    """Reads ``tools=`` (``all``, ``read-only``, names) into tools."""
    ask: Ask | None = None
    """Who is asked to confirm a cost above ``confirm_above`` (None: nobody can answer, so the run is refused)."""

    def __post_init__(self) -> None:
        """A path may come as text (a script builds its own context): each is made a ``Path`` here, and one that is
        not a path, or that no file can have, is refused by name, not found as a ``TypeError`` inside a run."""
        for name in ("sessions", "root", "replay", "record"):
            value = getattr(self, name)
            if value is None and name != "sessions":
                continue
            object.__setattr__(self, name, _path(f"MapContext({name}=...)", value))

    @property
    def folder(self) -> Path:
        """The root of a run's files: the notebook's folder."""
        return self.sessions.parent


def _path(what: str, value: Any) -> Path:
    if not isinstance(value, str | os.PathLike) or not os.fspath(value):
        raise SettingsError(f"{what} takes a folder's path, got {value!r}")
    path = Path(value)
    try:
        os.stat(path)
    except FileNotFoundError:  # not made yet: a run makes what it needs
        pass
    except (OSError, ValueError) as exc:  # a NUL, a name too long
        text = os.fspath(value)
        shown = repr(text if len(text) <= 60 else text[:60] + "...")
        raise SettingsError(f"{what}: {shown} cannot name a folder ({type(exc).__name__}: "
                            f"{getattr(exc, 'strerror', None) or exc})") from None
    return path


def given(context: object) -> MapContext:
    """The context a run was handed, else the current one; anything else is refused by name."""
    if context is None:
        return current()
    if not isinstance(context, MapContext):
        raise SettingsError(f"context= takes a brute_nb.map.context.MapContext, got {type(context).__name__}")
    return context


def default_context() -> MapContext:
    """A run's context outside a kernel: rows under ``<cwd>/notebook.brute``, the environment's model, a person
    asked only at a terminal."""
    return MapContext(sessions=Path(os.getcwd()) / DEFAULT_FOLDER, ask=terminal())


_driver: Callable[[], MapContext] | None = None


def drive(builder: Callable[[], MapContext] | None) -> None:
    """Make ``builder`` give the context of every run not handed one (the notebook installs the kernel's)."""
    global _driver
    _driver = builder


def current() -> MapContext:
    """The context of a run not handed one: the driver's, else the default."""
    return _driver() if _driver is not None else default_context()
