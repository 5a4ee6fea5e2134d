"""TurnContext: puts a turn's context (``env["context"]``) into every model request of that turn, and nowhere else.

The context (the user's recent notebook cells, say) is sent as a user message marked as context, just before the
turn's prompt, on a copy of the log handed to the model call; the log itself never holds it. So SessionLog, which
persists every message the log receives, never writes it, and the session file does not grow by it turn after
turn. Place it innermost, right around the provider: the provider's reply is moved from the copy to the real log,
where it is persisted and announced like any other.
"""

from __future__ import annotations

from typing import Any

from brute_nb.agent import App, Env
from brute_nb.message import Log, Message, Role, role_of


def with_context(messages: list[Any], text: str) -> Log:
    """A copy of ``messages`` with ``text`` as a user message just before the last user message (the prompt)."""
    at = next((i for i in range(len(messages) - 1, -1, -1) if role_of(messages[i]) == "user"), len(messages))
    view = Log(messages)
    list.insert(view, at, Message(Role.USER, text, meta={"context": True}))
    return view


class TurnContext:
    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, env: Env) -> Any:
        text = env.get("context")
        if not text:
            return await self.app(env)
        log = env["messages"]
        view = with_context(log, str(text))
        sent = len(view)
        env["messages"] = view
        try:
            return await self.app(env)
        finally:
            env["messages"] = log
            for message in view[sent:]:
                log.append(message)  # the reply: persisted and announced through the real log's observers
