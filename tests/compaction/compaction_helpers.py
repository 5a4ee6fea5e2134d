"""Shared test helpers: the provider-rules check, a strategy for valid logs, and a tool-answering middleware.

``problems(log)`` builds the request each real provider would send (``OpenAIChat.request`` and
``AnthropicMessages.request``, i.e. the real transports) and runs it through the rules the strict FakeProvider
server enforces (``brute_nb.testing.rules``), so "valid for both providers" means exactly "the fake server would
accept it". One more check is on the log itself: the Anthropic transport repairs a log that does not start with a
user turn (it inserts a placeholder), and OpenAI's API does not require a user message at all, so a compaction
that dropped the first user message would pass both wires; the log check catches it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from unittest import mock

from hypothesis import strategies as st

from brute_nb.message import Message, Role, ToolCall, role_of
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import rules

PROVIDERS = {"openai_chat": OpenAIChat("gpt-fake"), "anthropic": AnthropicMessages("claude-fake")}


TRANSPORTS = ("brute_nb.transports.anthropic", "brute_nb.transports.openai", "brute_nb.transports.base")
"""The modules whose translation starts from ``sendable.history`` (the one place that repairs what is sent)."""


@contextlib.contextmanager
def unrepaired() -> Iterator[None]:
    """The transports translate the log as it stands, without ``sendable``'s repair.

    They send the repaired history, so a broken log never reaches an API; the compaction tests turn that off,
    because what compaction leaves in the session file must be valid itself (architecture: the log on disk is always
    valid for both providers), not only once a request has repaired it.
    """
    with contextlib.ExitStack() as stack:
        for module in TRANSPORTS:
            stack.enter_context(mock.patch(f"{module}.history", list))
        yield


def requests(messages: list[Any]) -> dict[str, dict[str, Any]]:
    """The request body each provider would build for ``messages`` as they stand (what its SDK serialises to JSON)."""
    with unrepaired():
        return {api: provider.request({"messages": messages}) for api, provider in PROVIDERS.items()}


def log_problems(messages: list[Any]) -> list[str]:
    first = next((m for m in messages if role_of(m) != "system"), None)
    if first is not None and role_of(first) != "user":
        return [f"the conversation starts with {role_of(first)!r}, not the first user message"]
    return []


def problems(messages: list[Any]) -> list[str]:
    found = [f"log: {p}" for p in log_problems(messages)]
    for api, body in requests(messages).items():
        found.extend(f"{api}: {p}" for p in rules.request_problems(api, body))
    return found


def check_valid(messages: list[Any]) -> None:
    found = problems(list(messages))
    if found:
        raise AssertionError("invalid log:\n  " + "\n  ".join(found))


# --- generated valid logs -----------------------------------------------------------------------------------

texts = st.one_of(
    st.text(alphabet="abcdef xyz\n", min_size=1, max_size=40).filter(str.strip),
    st.integers(min_value=200, max_value=6000).map(lambda n: "x" * n),
)


@st.composite
def steps(draw: st.DrawFn, ids: list[int]) -> list[Message]:
    n_calls = draw(st.integers(min_value=0, max_value=3))
    calls = []
    for _ in range(n_calls):
        ids[0] += 1
        name = draw(st.sampled_from(["read", "shell", "fetch", "write"]))
        arguments: dict[str, Any] = {"arg": draw(st.text(alphabet="ab/", max_size=10))}
        if name == "write":  # sometimes a large argument, which ToolResults shortens in old steps
            arguments["content"] = draw(texts)
        calls.append(ToolCall(id=f"c{ids[0]}", name=name, arguments=arguments))
    text = draw(texts) if not calls or draw(st.booleans()) else ""
    meta = {"input_tokens": draw(st.integers(min_value=0, max_value=200_000))} if draw(st.booleans()) else None
    out = [Message(Role.ASSISTANT, text, tool_calls=calls or None, meta=meta)]
    results = [Message(Role.TOOL, draw(texts), tool_call_id=c.id, meta={"tool_name": c.name}) for c in calls]
    out.extend(draw(st.permutations(results)) if results else [])
    return out


@st.composite
def valid_logs(draw: st.DrawFn) -> list[Message]:
    ids = [0]
    log: list[Message] = []
    if draw(st.booleans()):
        log.append(Message(Role.SYSTEM, "You are a test agent."))
    for turn in range(draw(st.integers(min_value=1, max_value=5))):
        log.append(Message(Role.USER, draw(texts) + f" (prompt {turn})"))
        for _ in range(draw(st.integers(min_value=0, max_value=8))):
            log.extend(draw(steps(ids)))
    return log


class AnswerTools:
    """Stands in for DefaultToolPipeline: after the model call, answers every call of the last message."""

    def __init__(self, app: Any, output: Any = None) -> None:
        self.app = app
        self.output = output or (lambda call, env: f"result of {call.name}")

    async def __call__(self, env: dict[str, Any]) -> Any:
        await self.app(env)
        last = env["messages"][-1]
        for call in last.tool_calls or ():
            env["messages"].append(Message(Role.TOOL, self.output(call, env), tool_call_id=call.id,
                                           meta={"tool_name": call.name}))
        return env
