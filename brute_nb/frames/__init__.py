"""The log as pandas DataFrames: one row a message (``frame``), one row a tool call (``tool_calls_frame``).

A frame is a view computed from the log and its ``meta``; ``log_from_frame`` turns a (filtered, edited) frame back
into a ``Log``. The invariant: ``log_from_frame(frame(log)) == log`` for every log of ``Message`` values, because the
last column, ``meta``, carries each message's whole meta; the explicit meta columns (``model``, ``input_tokens``...)
are written back into it only where they were edited; ``attachments`` holds the ``Attachment`` values themselves
(bytes reachable), so a frame turned back into a session keeps them. Derived columns (``turn``, ``tool_names``,
``n_tool_calls``, ``chars``) are never read back: ``tool_calls`` and ``content`` are the truth. A session file is read
into the same columns by ``brute_nb.sessions.columns.read_frame``.

One job a module: ``messages`` builds the message frame, ``tool_calls`` the tool-call frame, ``to_log`` reads an
edited frame back. Two modules serve them: ``meta_columns`` lifts the explicit meta columns (building and reading
back must compute them alike for an edit to be found) and ``arrays`` turns plain values into numpy and pandas arrays.
Each imports pandas and numpy inside its functions, so ``import brute_nb`` stays light.
"""

from __future__ import annotations

from brute_nb.frames.messages import BASE, COLUMNS, KIND, frame
from brute_nb.frames.meta_columns import META_COLUMNS
from brute_nb.frames.to_log import log_from_frame
from brute_nb.frames.tool_calls import TOOL_CALL_COLUMNS, tool_calls_frame

__all__ = [
    "BASE", "COLUMNS", "KIND", "META_COLUMNS", "TOOL_CALL_COLUMNS", "frame", "log_from_frame", "tool_calls_frame",
]
