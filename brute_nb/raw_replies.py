"""The provider's own reply behind each recent message (RubyLLM's ``Message#raw``), kept in memory only.

A reply as the API sent it doubles what a session file holds (the text is already the message), so it is never
written: ``Message.raw`` answers for the replies this process received, by response id, and None for a message
read back from a file. The newest ``KEEP`` replies are held, so a long-running kernel does not grow without bound.
This module imports nothing of brute_nb's (``Message`` reads it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

KEEP = 256
_replies: OrderedDict[str, Any] = OrderedDict()
_lock = threading.Lock()


def keep(data: Any) -> None:
    """Hold a reply (a dict with the API's ``id``); one without an id cannot be found again, so it is not held."""
    reply_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(reply_id, str) or not reply_id:
        return
    with _lock:
        _replies[reply_id] = data
        _replies.move_to_end(reply_id)
        while len(_replies) > KEEP:
            _replies.popitem(last=False)


def find(reply_id: object) -> Any:
    with _lock:
        return _replies.get(reply_id) if isinstance(reply_id, str) else None
