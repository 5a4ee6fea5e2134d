"""The library transports (llm, any-llm, pydantic-ai) on real library objects and against the fake server.

Properties: brute log → the library's own objects (serialised and read back by the library itself) → brute log is
the identity on role, content, calls, ids and results. Then each library calls the fake server with a dumped log
(the server refuses a request the real API would refuse) and its reply is wrapped back.
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given

from brute_nb.message import Log, Message, Role, ToolCall
from brute_nb.testing import FakeProvider, call, reply, rules
from brute_nb.transports import LLM, AnyLLM, LLMRequest, PydanticAI

from .test_properties import EXAMPLES, logs, shape


@pytest.fixture(autouse=True)
def _collect_library_clients() -> Iterator[None]:
    """llm and any-llm build an SDK client for every call and never close it; against the keep-alive fake (as
    against a real API) each leaves a socket open until the garbage collector finds it. Collect them here, where
    they were made, so their ResourceWarnings are not raised later inside an unrelated test. (brute_nb's own
    LLMModel closes what llm made: tests/providers/test_llm_provider.py runs with no such help.)"""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def shapes(messages: Any) -> list[tuple[Any, ...]]:
    return [shape(m) for m in messages]


def sample_log() -> Log:
    log = Log()
    log.system("be brief")
    log.user("add 1 and 2, then double 3")
    log.assistant("", [ToolCall("c1", "add", {"a": 1, "b": 2}), ToolCall("c2", "double", {"x": 3})])
    log.tool("3", tool_call_id="c1")
    log.tool("Error: ValueError: no", tool_call_id="c2", is_error=True)
    return log


@EXAMPLES
@given(logs())
def test_pydantic_ai_round_trip_through_its_own_serialisation(log: Log) -> None:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    dumped = PydanticAI.dump_all(log)
    reloaded = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(dumped))
    assert shapes(PydanticAI.wrap_each(reloaded)) == shapes(log)


@EXAMPLES
@given(logs())
def test_llm_round_trip_through_its_own_serialisation_and_turn_split(log: Log) -> None:
    from llm.parts import Message as Part

    request = LLM.dump_all(log)
    reloaded = [Part.from_dict(m.to_dict()) for m in request]
    assert shapes(LLM.wrap_each(reloaded)) == shapes(log)
    # The pieces llm's prompt() takes give the same log: history, then tool results, then the prompt text.
    pieces = [*request.history, *request.tool_results, *([request.prompt] if request.prompt else [])]
    assert shapes(LLM.wrap_each(pieces)) == shapes(log)


@EXAMPLES
@given(logs())
def test_any_llm_round_trip_and_rules(log: Log) -> None:
    from any_llm.types.completion import ChatCompletionMessage

    dumped = AnyLLM.dump_all(log)
    assert rules.openai_chat_problems({"model": "m", "messages": dumped}) == []
    # any-llm's own message type reads back what an assistant turn becomes.
    echoed = [AnyLLM.wrap_one(ChatCompletionMessage.model_validate(d)) if d["role"] == "assistant"
              else AnyLLM.wrap_one(d) for d in dumped]
    assert shapes(echoed) == shapes(log)


def test_llm_request_is_the_turn_llm_builds() -> None:
    log = sample_log()
    request = LLM.dump_all(log)
    assert isinstance(request, LLMRequest)
    assert request.prompt is None
    assert [(r.name, r.output, r.tool_call_id) for r in request.tool_results] == [
        ("add", "3", "c1"), ("double", "Error: ValueError: no", "c2")]
    assert request.system == "be brief"
    assert [m.role for m in request.history] == ["system", "user", "assistant"]
    log.assistant("6 and 3")
    log.user("thanks")
    request = LLM.dump_all(log)
    assert request.prompt == "thanks" and request.tool_results == []
    assert [m.role for m in request] == ["system", "user", "assistant", "tool", "assistant", "user"]


def test_tool_results_need_their_tool_name() -> None:
    result = Message(Role.TOOL, "3", tool_call_id="c9")
    for transport in (LLM, PydanticAI):
        with pytest.raises(TypeError, match="tool name of the result for call 'c9'"):
            transport.dump(result)
    # In a whole log a result with no call is left out (brute_nb.sendable), never sent with a made-up name.
    assert [m.role for m in LLM.dump_all([Message(Role.USER, "x"), result])] == ["user"]
    assert len(PydanticAI.dump_all([Message(Role.USER, "x"), result])[0].parts) == 1
    assert PydanticAI.dump(result.with_meta(tool_name="add")).parts[0].tool_name == "add"


def test_pydantic_ai_refuses_what_a_text_log_cannot_hold() -> None:
    from pydantic_ai.messages import (
        ImageUrl,
        ModelRequest,
        ModelResponse,
        NativeToolCallPart,
        RetryFeedbackPart,
        RetryInfo,
        ToolReturnPart,
        UserPromptPart,
    )

    with pytest.raises(TypeError, match="PydanticAI transport cannot carry a user prompt with images"):
        list(PydanticAI.wrap_each([ModelRequest(parts=[UserPromptPart(["see", ImageUrl("https://x/y.png")])])]))
    with pytest.raises(TypeError, match="'builtin-tool-call' response part"):
        list(PydanticAI.wrap_each([ModelResponse(parts=[NativeToolCallPart("web_search", {}, "n1")])]))
    with pytest.raises(TypeError, match="expected a ModelRequest or ModelResponse"):
        list(PydanticAI.wrap_each(["hello"]))
    retried, feedback = PydanticAI.wrap_each([ModelRequest(parts=[
        ToolReturnPart("add", "bad x", tool_call_id="c1", outcome="retried"),
        RetryFeedbackPart("say it as JSON", retry=RetryInfo(cause="no_output"))])])
    assert (retried.role, retried.tool_call_id, retried.meta["is_error"]) == (Role.TOOL, "c1", True)
    assert feedback.role == Role.USER and "say it as JSON" in feedback.content


def test_llm_refuses_attachments_and_provider_run_calls() -> None:
    import llm
    from llm.parts import AttachmentPart, ToolCallPart
    from llm.parts import Message as Part

    with pytest.raises(TypeError, match="LLM transport cannot carry a AttachmentPart"):
        list(LLM.wrap_each([Part(role="user", parts=[AttachmentPart(attachment=llm.Attachment(url="https://x"))])]))
    with pytest.raises(TypeError, match="ToolCallPart run by the provider"):
        list(LLM.wrap_each([Part(role="assistant", parts=[ToolCallPart(name="s", server_executed=True)])]))
    with pytest.raises(TypeError, match="expected an llm Response"):
        list(LLM.wrap_each([42]))


def test_any_llm_keeps_reasoning_and_tool_call_extras() -> None:
    from any_llm.types.completion import ChatCompletion

    completion = ChatCompletion.model_validate({
        "id": "r1", "object": "chat.completion", "created": 1, "model": "gemini-x",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "reasoning": {"content": "think"},
            "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1}"},
                            "extra_content": {"google": {"thought_signature": "sig"}}}]}}]})
    message = AnyLLM.wrap_one(completion)
    assert message.meta["reasoning_content"] == "think"
    assert message.tool_calls == (ToolCall("t1", "add", {"a": 1}),)
    assert AnyLLM.dump(message)["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig"}}
    with pytest.raises(TypeError, match="not stream chunks"):
        AnyLLM.wrap_one({"object": "chat.completion.chunk", "choices": []})


def script() -> list[Any]:
    return [reply("", call("double", {"x": 21})), "42"]


def test_pydantic_ai_model_over_the_fake_server() -> None:
    import anyio
    from pydantic_ai.direct import model_request
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.tools import ToolDefinition

    log = sample_log()
    with FakeProvider(script()) as fake:
        model = OpenAIChatModel("gpt-x", provider=OpenAIProvider(base_url=fake.openai_base_url, api_key=fake.api_key))
        params = ModelRequestParameters(function_tools=[ToolDefinition(name="double", parameters_json_schema={
            "type": "object", "properties": {"x": {"type": "integer"}}})])
        # The async call (model_request_sync leaves an event loop of its own unclosed), and the client closed after
        # it: the fake keeps connections alive, as the real APIs do, so an unclosed client leaks its socket.

        async def ask() -> Any:
            try:
                return await model_request(model, PydanticAI.dump_all(log), model_request_parameters=params)
            finally:
                await model.client.close()

        response = anyio.run(ask)
        sent = fake.requests[-1]["json"]["messages"]
    (message,) = PydanticAI.wrap_each([response])
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["c1", "c2"]
    assert message.tool_calls == (ToolCall("call_1_0", "double", {"x": 21}),)
    assert message.meta["finish_reason"] == "tool_calls" and message.meta["model"] == "gpt-x"


def test_llm_model_over_the_fake_server() -> None:
    from llm.default_plugins.openai_models import Chat

    log = sample_log()
    with FakeProvider(script()) as fake:
        model = Chat("fake-gpt", model_name="gpt-x", api_base=fake.openai_base_url, supports_tools=True)
        request = LLM.dump_all(log)
        response = model.prompt(request.prompt, messages=request.history, tool_results=request.tool_results,
                                key=fake.api_key)
        (message,) = LLM.wrap_each(response)
        sent = fake.requests[-1]["json"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool"]
    assert message.tool_calls == (ToolCall("call_1_0", "double", {"x": 21}),)
    assert message.meta["input_tokens"] > 0 and message.meta["finish_reason"] == "tool_calls"


def test_llm_conversation_continues_the_dumped_history() -> None:
    from llm.default_plugins.openai_models import Chat

    log = sample_log()
    with FakeProvider(script()) as fake:
        model = Chat("fake-gpt", model_name="gpt-x", api_base=fake.openai_base_url, supports_tools=True)
        request = LLM.dump_all(log)
        conversation = request.conversation(model)
        response = conversation.prompt(request.prompt, tool_results=request.tool_results, key=fake.api_key)
        (message,) = LLM.wrap_each(response)
        sent = fake.requests[-1]["json"]["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool"]
        # The conversation now holds the whole exchange, and reads back as the log plus the reply.
        assert shapes(LLM.wrap_each(conversation)) == shapes([*log, message])


def test_any_llm_completion_over_the_fake_server() -> None:
    import any_llm

    log = sample_log()
    with FakeProvider(script()) as fake:
        completion = any_llm.completion("openai:gpt-x", AnyLLM.dump_all(log), api_base=fake.openai_base_url,
                                        api_key=fake.api_key)
        sent = fake.requests[-1]["json"]["messages"]
    message = AnyLLM.wrap_one(completion)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool"]
    assert message.tool_calls == (ToolCall("call_1_0", "double", {"x": 21}),)
