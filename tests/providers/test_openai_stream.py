"""``providers.openai._ChatAccumulator`` adds streamed Chat Completions chunks up to what the SDK's own
``chat.completions.stream`` helper builds.

The provider reads the raw chunks of ``chat.completions.create(stream=True)`` and folds them itself (text and
reasoning as they come, tool-call fragments joined by index), skipping the helper's snapshot and its events. Each
scripted reply is served twice by the fake server, in the API's SSE shape, and read by the real SDK both ways: the
helper's completion (its snapshot once the stream ends) and the accumulator's must give the transport the same
message, and agree on every field the transport reads (content, tool calls, finish reason, usage, model).
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai
import pytest

from brute_nb.providers.openai import _ChatAccumulator
from brute_nb.testing import FakeProvider, call
from brute_nb.testing import Reply as Scripted
from brute_nb.transports.openai import OpenAI

REPLIES = {
    "text": Scripted(text="Hello there, " * 30),
    "tool calls": Scripted(text="Let me look.", calls=(call("lookup", {"key": "k" * 200, "n": [1, 2, {"a": None}]}),
                                                        call("lookup", {}))),
    "tool calls, no text": Scripted(calls=(call("read", {"file_path": "a.py"}),)),
    "cut at max_tokens": Scripted(text="cut", finish="length", cached_tokens=7),
    "reasoning": Scripted(text="done", reasoning_tokens=12),
}


def _read(data: dict[str, Any]) -> Any:
    """What the transport reads of a completion: its message as the log keeps it, and the completion's fields it
    reads; the ids the fake numbers per reply (``chatcmpl-2``, ``call_2_0``) compared by their place, not number."""
    choice = data["choices"][0]
    message = OpenAI.wrap_one(data)
    calls = [{"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
             for c in choice["message"].get("tool_calls") or ()]
    read = {"message": message.to_dict() | {"meta": {k: v for k, v in message.meta.items() if k != "id"}},
            "content": choice["message"].get("content") or "", "calls": calls,
            "finish": choice["finish_reason"], "usage": data.get("usage"), "model": data.get("model")}
    return json.loads(re.sub(r"(chatcmpl-|call_)\d+", r"\1N", json.dumps(read)))


@pytest.mark.parametrize("name", list(REPLIES))
def test_reply_is_what_the_sdk_stream_helper_builds(fake_provider: FakeProvider, name: str) -> None:
    fake_provider.add(REPLIES[name], REPLIES[name])
    request: dict[str, Any] = {"model": "gpt-fake", "messages": [{"role": "user", "content": "go"}],
                               "stream_options": {"include_usage": True}}
    acc, streamed = _ChatAccumulator(), []
    with openai.OpenAI(base_url=fake_provider.base_url, api_key=fake_provider.api_key, max_retries=0) as client:
        with client.chat.completions.stream(**request) as stream:
            for _ in stream:  # the helper's own accumulation (its final parse refuses a reply cut at the limit)
                pass
            helper = stream.current_completion_snapshot.model_dump(mode="json")
        with client.chat.completions.create(**request, stream=True) as chunks:
            for chunk in chunks:
                text, _ = acc.add(chunk)
                streamed.append(text)
    ours = acc.completion()
    assert _read(ours) == _read(helper)
    assert "".join(streamed) == (helper["choices"][0]["message"]["content"] or "")
