"""How a session is stored: one JSONL file of messages beside the notebook, and everything that reads or writes it.

- ``file``: the strict reader (file:line errors, a torn last line set aside), appends that roll back on failure, the
  atomic rewrite with its archive, and ``SessionFile`` (one session's file, its signature and link checks);
- ``lock``: the per-turn lock across processes;
- ``lines``: the fast line reader, exactly the strict reader's result or a hand-off to it;
- ``columns``: ``read_frame``, a session file straight into the log's DataFrame;
- ``names``: what a session (or a map run) may be called;
- ``index``: every session beside a notebook (or under a folder) as one frame, and ``search`` across them.
  ``brute_nb.sessions()`` calls ``index.sessions``: the package is callable, so the name says both things.

This layer sits on the values (``message``, ``attachments``, ``frames``) and below everything that runs a turn:
``middleware.SessionLog`` uses it, as do the map cache and the notebook's session commands.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from brute_nb.sessions.file import SessionFile, SessionFileWarning, append_lines, read_session, replace_atomically
from brute_nb.sessions.lock import SessionLock

__all__ = ["SessionFile", "SessionFileWarning", "SessionLock", "append_lines", "read_session", "replace_atomically"]


class _Package(types.ModuleType):
    """This package, callable: ``brute_nb.sessions(folder=None)`` is ``index.sessions`` (one frame of every session
    beside the notebook, or under ``folder``)."""

    def __call__(self, folder: str | os.PathLike[str] | None = None) -> Any:
        from brute_nb.sessions.index import sessions

        return sessions(folder)


sys.modules[__name__].__class__ = _Package
