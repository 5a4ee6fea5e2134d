"""What a user writes by hand around the raw SDKs: the baseline every tool-loop row is measured against.

One copy for ``run.py`` (the async SDK, in the project's Python) and ``peers.py`` (the sync SDK, also run by
``bench/.peers-venv``'s Python): plain Python, no imports beyond the standard library, so both sides of a
comparison gather a streamed OpenAI reply and answer its tool calls in exactly the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

LOOKUP_ANTHROPIC: dict[str, Any] = {
    "name": "lookup", "description": "Look a key up.",
    "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}
LOOKUP_OPENAI: dict[str, Any] = {"type": "function", "function": {"name": "lookup", "description": "Look a key up.",
                                                                  "parameters": LOOKUP_ANTHROPIC["input_schema"]}}


class OpenAIStreamed:
    """A streamed chat completion gathered chunk by chunk: its text and its tool calls by index."""

    def __init__(self) -> None:
        self.text = ""
        self.calls: dict[int, dict[str, str]] = {}

    def add(self, chunk: Any) -> None:
        if not chunk.choices:
            return
        delta = chunk.choices[0].delta
        self.text += delta.content or ""
        for d in delta.tool_calls or ():
            c = self.calls.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
            c["id"] += d.id or ""
            c["name"] += (d.function and d.function.name) or ""
            c["arguments"] += (d.function and d.function.arguments) or ""

    def answer(self, run: Callable[..., str]) -> list[dict[str, Any]]:
        """The assistant message and one tool message a call, each call run with ``run``."""
        calls = self.calls.values()
        return [{"role": "assistant", "content": self.text or None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls]}] + [{"role": "tool", "tool_call_id": c["id"], "content": run(**json.loads(c["arguments"]))}
                                 for c in calls]
