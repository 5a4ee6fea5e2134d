"""How a session is stored: one JSONL file of messages beside the notebook, and everything that reads or writes it.

- ``file``: the strict reader (file:line errors, a torn last line set aside), appends that roll back on failure, the
  atomic rewrite with its archive, and ``SessionFile`` (one session's file, its signature and link checks);
- ``lock``: the per-turn lock across processes;
- ``lines``: the fast line reader, exactly the strict reader's result or a hand-off to it;
- ``columns``: ``read_frame``, a session file straight into the log's DataFrame.

This layer sits on the values (``message``, ``attachments``, ``frames``) and below everything that runs a turn:
``middleware.SessionLog`` uses it, as do the map cache and the notebook's session commands.
"""

from __future__ import annotations

from brute_nb.sessions.file import SessionFile, SessionFileWarning, append_lines, read_session, replace_atomically
from brute_nb.sessions.lock import SessionLock

__all__ = ["SessionFile", "SessionFileWarning", "SessionLock", "append_lines", "read_session", "replace_atomically"]
