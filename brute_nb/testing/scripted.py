"""Scripted: a fake model with a queue of replies and a record of what it was sent (the main test double).

It is a real handler for ``agent.run``: it reads ``env["messages"]`` and ``env["tools"]``, streams its text as
``assistant_delta`` events and appends its reply, so the whole stack around it runs for real.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from brute_nb.errors import BruteError
from brute_nb.events import emit
from brute_nb.message import Message, Role, ToolCall

ScriptedReply = str | Message | Mapping[str, Any] | Callable[[dict[str, Any]], Any]
"""One entry of a ``Scripted`` queue: text, a Message, a message dict, or a function of env returning one.
(``brute_nb.testing.Reply`` is the other fake's: a reply ``FakeProvider`` sends over the wire.)"""


class ScriptExhaustedError(BruteError):
    """The scripted model was called more times than it had replies."""


def call(name: str, arguments: Mapping[str, Any] | None = None, id: str | None = None) -> ToolCall:
    """A tool call for a scripted reply; ids default to ``call_<n>`` in script order."""
    return ToolCall(id=id or "", name=name, arguments=dict(arguments or {}))


def reply(text: str = "", *calls: ToolCall, **meta: Any) -> Message:
    """An assistant reply with optional tool calls."""
    return Message(Role.ASSISTANT, text, tool_calls=list(calls) or None, meta=meta or None)


class Scripted:
    """``agent.run(Scripted(["hi", reply("", call("read", {"file_path": "a"}))]))``."""

    def __init__(self, replies: Iterable[ScriptedReply] = (), *, chunk: int = 8, model: str = "scripted") -> None:
        self.replies: list[ScriptedReply] = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.chunk = chunk
        self.model = model
        self._ids = 0

    def add(self, *replies: ScriptedReply) -> Scripted:
        self.replies.extend(replies)
        return self

    @property
    def calls(self) -> int:
        return len(self.requests)

    def _message(self, item: ScriptedReply, env: dict[str, Any]) -> Message:
        if callable(item) and not isinstance(item, Message):
            item = item(env)
        if isinstance(item, str):
            return Message(Role.ASSISTANT, item)
        if isinstance(item, Mapping):
            item = Message.from_dict({"role": "assistant", **item})
        if not isinstance(item, Message):
            raise TypeError(f"a scripted reply must be str, Message, dict or callable, not {type(item).__name__}")
        if item.tool_calls:
            calls = []
            for c in item.tool_calls:
                if not c.id:
                    self._ids += 1
                    c = ToolCall(id=f"call_{self._ids}", name=c.name, arguments=c.arguments)
                calls.append(c)
            item = item.replace(tool_calls=calls)
        return item

    async def __call__(self, env: dict[str, Any]) -> None:
        tools = env.get("tools") or []
        self.requests.append(
            {
                "messages": [m.to_dict() for m in env["messages"]],
                "tools": [t.to_dict() if hasattr(t, "to_dict") else copy.deepcopy(t) for t in tools],
            }
        )
        if not self.replies:
            raise ScriptExhaustedError(
                f"the scripted model has no reply left for call {len(self.requests)}; add one with .add(...)"
            )
        message = self._message(self.replies.pop(0), env)
        for i in range(0, len(message.content), self.chunk):
            emit(env, "assistant_delta", {"text": message.content[i : i + self.chunk]})
        meta = {"model": self.model, **message.meta}
        env["messages"].append(message.replace(meta=meta))
