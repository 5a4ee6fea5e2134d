"""SystemPrompt: puts the system message first, every turn, and never lets it reach the session file.

SessionLog skips system messages when it writes, so the prompt can change between turns (a new root, new
skills) without rewriting history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brute_nb.env import App, Env
from brute_nb.errors import MiddlewareError
from brute_nb.maybe_async import call_maybe_async
from brute_nb.message import Message, Role, role_of

PromptSource = str | Callable[[Env], Any]


class SystemPrompt:
    def __init__(self, app: App, text: PromptSource = "") -> None:
        if not (isinstance(text, str) or callable(text)):
            raise MiddlewareError(f"SystemPrompt(text=...) takes a string or a callable of env, got {text!r}")
        self.app = app
        self.text = text

    async def render(self, env: Env) -> str:
        if isinstance(self.text, str):
            return self.text
        value = await call_maybe_async(self.text, env, thread=False)
        return "" if value is None else str(value)

    async def __call__(self, env: Env) -> Any:
        messages = env["messages"]
        # System messages lead the log (SessionLog keeps a turn's first), so only the first one is looked at:
        # scanning the whole log would make every turn O(history).
        if not (messages and role_of(messages[0]) == "system"):
            text = await self.render(env)
            if text:
                messages.insert(0, Message(Role.SYSTEM, text))
        return await self.app(env)
