"""TurnContext: puts a turn's context (``env["context"]``) into every model request of that turn, and nowhere else.

The context (the user's recent notebook cells, say) is sent as a user message marked as context, just before the
turn's prompt, on a copy of the log handed to the model call; the log itself never holds it. So SessionLog, which
persists every message the log receives, never writes it, and the session file does not grow by it turn after
turn. Place it innermost, right around the provider: the provider's reply is moved from the copy to the real log,
where it is persisted and announced like any other.

The copy is made once a turn, not once a model call: a tool loop's later calls extend it with what the log gained
since (its replies and tool results), so the request building that resumes from a log's ``prefix_memo`` (the
payload, ``sendable.valid``) stays O(new messages) on a long session, as it is without context. Whenever the
extended copy could differ from a fresh one (the log changed other than by appends, its system lead changed, a new
user message moved the prompt, another context) it is made afresh. The log's memo holds the one copy until
then, so a session with context keeps at most one such copy (and its translated payload) beside its log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brute_nb.env import App, Env
from brute_nb.log import Log
from brute_nb.message import Message, Role, role_of
from brute_nb.prefix_memo import keep, resume


def with_context(messages: list[Any], text: str) -> Log:
    """A copy of ``messages`` with ``text`` as a user message just before the last user message (the prompt)."""
    at = next((i for i in range(len(messages) - 1, -1, -1) if role_of(messages[i]) == "user"), len(messages))
    view = Log(messages)
    list.insert(view, at, Message(Role.USER, text, meta={"context": True}))
    return view


@dataclass(frozen=True)
class _Copy:
    """The copy a turn's model calls share, and what it was made from."""

    view: Log
    text: str
    lead: tuple[Any, ...]
    """The log's leading system messages when the copy was last brought up to date (compared by identity)."""


_KEY = "turn_context"


class TurnContext:
    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, env: Env) -> Any:
        text = env.get("context")
        if not text:
            return await self.app(env)
        log = env["messages"]
        view = self._copy(log, str(text))
        sent = len(view)
        env["messages"] = view
        try:
            return await self.app(env)
        finally:
            env["messages"] = log
            for message in view[sent:]:
                log.append(message)  # the reply: persisted and announced through the real log's observers
            self._keep(log, str(text), view)

    def _copy(self, log: Any, text: str) -> Log:
        """The copy for this call: the kept one extended by the log's appends since, or a fresh one."""
        lead, at, kept = resume(log, _KEY)  # kept in the log's own memo: emptied by any change but an append
        if (isinstance(kept, _Copy) and kept.text == text and len(kept.lead) == lead
                and all(a is b for a, b in zip(kept.lead, log[:lead], strict=True))):
            added = log[at:]
            if all(role_of(m) != "user" for m in added):  # a new user message is where a fresh copy puts it
                kept.view.extend(added)
                return kept.view
        return with_context(log, text)

    def _keep(self, log: Any, text: str, view: Log) -> None:
        lead, _, _ = resume(log, _KEY)
        keep(log, _KEY, lead, _Copy(view, text, tuple(log[:lead])))
