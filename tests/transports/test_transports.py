"""Pure dict-in, dict-out tests of the three transports and the base class plumbing."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from brute_nb.message import INVALID_ARGUMENTS_KEY, Log, Message, Role, ToolCall
from brute_nb.transports import Anthropic, MessageTransport, OpenAI, ResponsesItems


def tool_log() -> Log:
    log = Log()
    log.system("be brief")
    log.user("read it")
    log.assistant("Let me look.", [ToolCall("c1", "read", {"file_path": "a.txt"}), ToolCall("c2", "shell", {})])
    log.tool("contents", tool_call_id="c1")
    log.tool("", tool_call_id="c2", is_error=True)
    log.user("thanks")
    return log


class Upper(MessageTransport):
    """A custom transport as the README shows: override dump and _wrap."""

    @classmethod
    def dump(cls, message: Any) -> Any:
        return {"who": str(message.role), "say": message.content.upper()}

    def _wrap(self, item: Any) -> Message:
        return Message(item["who"], item["say"].lower())


def test_custom_transport_dumps_and_wraps_single_list_and_transcript() -> None:
    log = Log()
    log.user("hi")
    assert Upper.dump_all(log) == [{"who": "user", "say": "HI"}]
    item = {"who": "assistant", "say": "HEY"}
    assert [m.content for m in Upper.wrap_each(item)] == ["hey"]
    assert [m.content for m in Upper.wrap_each([item, [item]])] == ["hey", "hey"]
    transcript = SimpleNamespace(messages=[item, item])
    assert len(Upper(transcript).messages) == 2
    assert [m.role for m in Upper(transcript).wrap_each()] == [Role.ASSISTANT, Role.ASSISTANT]


def test_base_transport_without_overrides_says_what_to_implement() -> None:
    with pytest.raises(NotImplementedError, match="dump"):
        MessageTransport.dump_all([Message("user", "x")])
    with pytest.raises(NotImplementedError, match="_wrap"):
        list(MessageTransport.wrap_each({"x": 1}))


def test_openai_dump_encodes_arguments_nulls_content_and_uses_tool_messages() -> None:
    out = OpenAI.dump_all(tool_log())
    assert out[0] == {"role": "system", "content": "be brief"}
    assistant = out[2]
    assert assistant["content"] == "Let me look."
    assert assistant["tool_calls"][0] == {
        "id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"file_path":"a.txt"}'}
    }
    assert out[3] == {"role": "tool", "tool_call_id": "c1", "content": "contents"}
    only_calls = OpenAI.dump(Message("assistant", "", tool_calls=[ToolCall("x", "f", {})]))
    assert only_calls["content"] is None


def test_openai_invalid_arguments_go_back_verbatim() -> None:
    call = ToolCall("x", "f", {INVALID_ARGUMENTS_KEY: "{oops"})
    out = OpenAI.dump(Message("assistant", "", tool_calls=[call]))
    assert out["tool_calls"][0]["function"]["arguments"] == "{oops"


def test_openai_wrap_completion_choice_message_and_meta() -> None:
    completion = {
        "id": "chatcmpl-1", "model": "gpt-x",
        "choices": [{"index": 0, "finish_reason": "length",
                     "message": {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"text": "b"}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 4}},
    }
    (m,) = OpenAI.wrap_each(completion)
    assert m.content == "ab"
    assert m.meta["finish_reason"] == "max_tokens"
    assert (m.meta["input_tokens"], m.meta["output_tokens"], m.meta["cache_read_tokens"]) == (10, 2, 4)
    assert m.meta["model"] == "gpt-x"
    (c,) = OpenAI.wrap_each(completion["choices"][0])
    assert c.content == "ab"


def test_openai_wrap_sdk_objects() -> None:
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate({
        "id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a": [1]}'}}]}}],
    })
    (m,) = OpenAI.wrap_each(completion)
    assert m.tool_calls == (ToolCall("t1", "f", {"a": [1]}),)
    assert m.meta["finish_reason"] == "tool_calls"
    (again,) = OpenAI.wrap_each(completion.choices[0].message)
    assert again.tool_calls == m.tool_calls


def test_openai_quirks_missing_ids_and_reasoning_content_round_trip() -> None:
    raw = {"role": "assistant", "content": "", "reasoning_content": "hmm",
           "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]}
    (m,) = OpenAI.wrap_each(raw)
    (again,) = OpenAI.wrap_each(raw)
    assert m.tool_calls and m.tool_calls[0].id.startswith("call_")
    assert m.tool_calls[0].id == again.tool_calls[0].id  # stable, so replay matches
    assert m.tool_calls[0].arguments == {"x": 1}
    assert OpenAI.dump(m)["reasoning_content"] == "hmm"
    assert "reasoning_content" not in OpenAI.dump(Message("assistant", "hi"))


def test_openai_malformed_arguments_are_kept_not_raised() -> None:
    raw = {"role": "assistant", "tool_calls": [{"id": "t", "function": {"name": "f", "arguments": "{'a': 1"}}]}
    (m,) = OpenAI.wrap_each(raw)
    assert m.tool_calls[0].arguments == {INVALID_ARGUMENTS_KEY: "{'a': 1"}
    assert not m.tool_calls[0].arguments_valid


def test_responses_dump_items() -> None:
    items = ResponsesItems.dump_all(tool_log())
    kinds = [i.get("type") for i in items]
    assert kinds == ["message", "message", "message", "function_call", "function_call",
                     "function_call_output", "function_call_output", "message"]
    assert items[3] == {"type": "function_call", "call_id": "c1", "name": "read", "arguments": '{"file_path":"a.txt"}'}
    assert items[5] == {"type": "function_call_output", "call_id": "c1", "output": "contents"}


def test_responses_wrap_response() -> None:
    response = {
        "id": "resp_1", "model": "gpt-r", "status": "completed",
        "output": [
            {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "thought"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi"}]},
            {"type": "function_call", "call_id": "fc1", "name": "f", "arguments": '{"q": "x"}'},
        ],
        "usage": {"input_tokens": 7, "output_tokens": 3, "input_tokens_details": {"cached_tokens": 1}},
    }
    (m,) = ResponsesItems.wrap_each(response)
    assert m.content == "Hi"
    assert m.tool_calls == (ToolCall("fc1", "f", {"q": "x"}),)
    assert m.meta["finish_reason"] == "tool_calls"
    assert m.meta["thinking"] == "thought"
    assert (m.meta["input_tokens"], m.meta["cache_read_tokens"]) == (7, 1)
    (bare,) = ResponsesItems.wrap_each(response["output"])
    assert bare.content == "Hi"


def test_anthropic_system_folding_and_alternation() -> None:
    log = tool_log()
    assert Anthropic.system_text(log) == "be brief"
    out = Anthropic.dump_all(log)
    assert [t["role"] for t in out] == ["user", "assistant", "user"]
    assert out[1]["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "c1", "name": "read", "input": {"file_path": "a.txt"}},
        {"type": "tool_use", "id": "c2", "name": "shell", "input": {}},
    ]
    assert out[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "contents"},
        {"type": "tool_result", "tool_use_id": "c2", "is_error": True},
        {"type": "text", "text": "thanks"},
    ]


def test_anthropic_never_sends_empty_text_and_starts_with_user() -> None:
    log = Log()
    log.assistant("earlier answer")
    log.user("")
    log.assistant("")
    log.user("next")
    out = Anthropic.dump_all(log)
    assert out[0] == {"role": "user", "content": "(continue)"}
    assert [t["role"] for t in out] == ["user", "assistant", "user"]
    assert all(t["content"].strip() for t in out)
    assert Anthropic.system_text(log) is None


def test_anthropic_wrap_blocks_thinking_usage_and_back() -> None:
    data = {
        "id": "msg_1", "model": "claude-x", "role": "assistant", "stop_reason": "tool_use",
        "content": [
            {"type": "thinking", "thinking": "plan", "signature": "sig"},
            {"type": "text", "text": "One "}, {"type": "text", "text": "two"},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"file_path": "x"}},
        ],
        "usage": {"input_tokens": 5, "output_tokens": 6, "cache_read_input_tokens": 3,
                  "cache_creation_input_tokens": 2},
    }
    (m,) = Anthropic.wrap_each(data)
    assert m.content == "One two"
    assert m.tool_calls == (ToolCall("toolu_1", "read", {"file_path": "x"}),)
    assert m.meta["finish_reason"] == "tool_calls"
    assert m.meta["stop_reason"] == "tool_use"
    assert m.meta["thinking"] == "plan"
    # Read into Usage's convention: the Messages API's input leaves the cache reads and writes out.
    assert (m.meta["input_tokens"], m.meta["cache_read_tokens"], m.meta["cache_write_tokens"]) == (10, 3, 2)
    dumped = Anthropic.dump(m)
    assert dumped["content"][0] == {"type": "thinking", "thinking": "plan", "signature": "sig"}


def test_anthropic_wrap_sdk_message() -> None:
    from anthropic.types import Message as AnthropicMessage

    msg = AnthropicMessage.model_validate({
        "id": "m", "type": "message", "role": "assistant", "model": "c", "stop_reason": "end_turn",
        "stop_sequence": None, "content": [{"type": "text", "text": "hello", "citations": None}],
        "usage": {"input_tokens": 1, "output_tokens": 2},
    })
    (m,) = Anthropic.wrap_each(msg)
    assert (m.role, m.content, m.meta["finish_reason"]) == (Role.ASSISTANT, "hello", "stop")


def test_transports_refuse_unreadable_results_with_a_clear_error() -> None:
    with pytest.raises(TypeError, match="OpenAI transport cannot read"):
        list(OpenAI.wrap_each(42))
    with pytest.raises(TypeError, match="expected a Response"):
        list(ResponsesItems.wrap_each({"nope": 1}))


class _ToolRequest(BaseModel):
    """Shaped like chatlas's ContentToolRequest: a tool call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any]


class Turn(BaseModel):
    """Shaped like a chatlas Turn: ``contents``, not ``content``."""

    role: str
    contents: list[_ToolRequest]


CHATLAS_TURN = Turn(role="assistant", contents=[_ToolRequest(id="t1", name="read", arguments={"file_path": "a"})])


@pytest.mark.parametrize("transport", [OpenAI, Anthropic, ResponsesItems])
def test_an_object_a_transport_cannot_read_is_refused_not_emptied(transport: Any) -> None:
    # Before: an empty assistant message, and the tool call silently gone.
    with pytest.raises(TypeError, match=rf"{transport.__name__} transport cannot read Turn: expected .*'contents'"):
        list(transport.wrap_each(CHATLAS_TURN))


@pytest.mark.parametrize(("transport", "payload", "named"), [
    (OpenAI, {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
     "function_call"),
])
def test_a_part_a_transport_cannot_read_is_refused_by_name(transport: Any, payload: Any, named: str) -> None:
    with pytest.raises(TypeError, match=named):
        list(transport.wrap_each(payload))


def test_a_responses_part_of_a_new_kind_is_kept_not_refused() -> None:
    """The API billed the reply: a part kind the transport does not read is kept whole and named (issue 42 §1)."""
    item = {"type": "message", "content": [{"type": "output_audio", "data": "AAA"}]}
    (m,) = ResponsesItems.wrap_each({"output": [item]})
    assert m.meta["provider_blocks"] == ["output_audio"] and m.meta["blocks"] == {"openai_responses": [item]}


def test_a_chat_part_of_a_kind_it_does_not_read_is_kept_not_refused() -> None:
    """As for Responses: an image part in a compatible server's reply is kept whole and named, the text read."""
    parts = [{"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "A cat."}]
    (m,) = OpenAI.wrap_each({"role": "assistant", "content": parts})
    assert m.content == "A cat."
    assert m.meta["provider_blocks"] == ["image_url"] and m.meta["blocks"] == {"openai_chat": parts}


def test_a_refusal_is_read_as_the_reply_text() -> None:
    m = OpenAI.wrap_one({"role": "assistant", "content": None, "refusal": "I can't help with that."})
    assert m.content == "I can't help with that."


def test_anthropic_sends_a_plain_text_turn_as_a_string_and_keeps_blocks_that_carry_something() -> None:
    log = Log()
    log.user("question")
    log.assistant("", [ToolCall("t1", "read", {"path": "a"})])
    log.tool("file text", tool_call_id="t1")
    log.assistant("answer")
    log.append(Message("user", "marked").cache_until_here())
    out = Anthropic.dump_all(log)
    assert out[0] == {"role": "user", "content": "question"}
    assert out[1]["content"] == [{"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}}]
    assert out[2]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "content": "file text"}]
    assert out[3] == {"role": "assistant", "content": "answer"}
    assert out[4]["content"] == [{"type": "text", "text": "marked", "cache_control": {"type": "ephemeral"}}]
    assert Anthropic.dump(Message("assistant", "hi")) == {"role": "assistant", "content": "hi"}
    assert Anthropic.dump(Message("assistant", "\n\n")) == {"role": "assistant", "content": []}  # never sent


def test_the_old_name_of_the_responses_transport_still_imports_with_a_warning() -> None:
    import brute_nb.transports as transports

    with pytest.warns(DeprecationWarning, match="now brute_nb.transports.ResponsesItems"):
        from brute_nb.transports import OpenAIResponses
    assert OpenAIResponses is ResponsesItems
    with pytest.raises(AttributeError):
        _ = transports.NoSuchTransport


def test_an_anthropic_provider_loads_no_other_transport() -> None:
    """Every provider imports ``transports.base``, which runs the package first: an eager package made an Anthropic
    kernel's first cell import the OpenAI, Responses, llm, any-llm and pydantic-ai translations it never uses."""
    import json
    import subprocess
    import sys

    code = ("import json, sys; import brute_nb.providers.anthropic; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('brute_nb.transports.'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout)
    others = {"openai", "openai_responses", "llm", "any_llm", "pydantic_ai"}
    assert not [m for m in loaded if m.rsplit(".", 1)[1] in others], loaded
    assert "brute_nb.transports.anthropic" in loaded
