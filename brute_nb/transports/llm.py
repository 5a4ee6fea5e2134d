"""llm transport: the Brute log as simonw's ``llm`` objects (its ``parts.Message`` chain, ``ToolResult``s, prompt).

``LLM.dump_all(log)`` is an ``LLMRequest``: the whole chain as ``llm.parts.Message`` values (a list), split the
way ``llm`` takes a turn: ``history`` (the conversation it continues), ``tool_results`` (``llm.ToolResult`` for
the results that end the log) and ``prompt`` (the user text that ends it):

    request = LLM.dump_all(env["messages"])
    response = model.prompt(request.prompt, messages=request.history, tool_results=request.tool_results,
                            tools=llm_tools(env["tools"]))
    env["messages"].extend(LLM.wrap_each(response))

``request.conversation(model)`` is the same history as an ``llm.Conversation``. Inbound, ``wrap_each`` reads a
``Response`` (its messages, usage and model), ``parts.Message`` values, ``ToolResult``s, a prompt string, an
``LLMRequest`` or a ``Conversation``. One Brute message per tool result; consecutive results share one ``tool``
message outbound, as ``llm`` builds them. Attachments and provider-run tool calls have no place in a Brute log
and are refused with a TypeError.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from brute_nb.message import JSON, Message, Role, ToolCall, role_of
from brute_nb.sendable import history
from brute_nb.transports.base import MessageTransport, response_meta
from brute_nb.transports.tool_names import call_names, cannot_carry, tool_name

NAME = "LLM"


class LLMRequest(list[Any]):
    """The log as ``llm.parts.Message`` values, plus the ``history`` / ``tool_results`` / ``prompt`` split."""

    def __init__(self, chain: Iterable[Any], history: int) -> None:
        super().__init__(chain)
        self._history = history

    @property
    def history(self) -> list[Any]:
        """The chain before the turn's input: what ``messages=`` (or a Conversation) continues."""
        return list(self[: self._history])

    @property
    def tool_results(self) -> list[Any]:
        import llm

        return [llm.ToolResult(name=p.name, output=p.output, tool_call_id=p.tool_call_id)
                for m in self[self._history:] if m.role == "tool" for p in m.parts]

    @property
    def prompt(self) -> str | None:
        texts = [p.text for m in self[self._history:] if m.role == "user" for p in m.parts]
        return "".join(texts) if texts else None

    @property
    def system(self) -> str | None:
        texts = [p.text for m in self if m.role == "system" for p in m.parts]
        return "\n\n".join(texts) if texts else None

    def conversation(self, model: Any) -> Any:
        """An ``llm.Conversation`` on ``model`` that continues ``history``."""
        import llm

        return llm.Conversation(model=model, loaded_messages=self.history)


class LLM(MessageTransport):
    """``model.prompt(r.prompt, messages=r.history, tool_results=r.tool_results)`` with ``r = LLM.dump_all(log)``."""

    @classmethod
    def dump_all(cls, messages: Iterable[Any]) -> LLMRequest:
        log = history(messages)
        names = call_names(log)
        chain: list[Any] = []
        for m in log:
            item = _dump(m, names)
            if item.role == "tool" and chain and chain[-1].role == "tool":
                chain[-1].parts.extend(item.parts)
            else:
                chain.append(item)
        return LLMRequest(chain, _turn_start(chain))

    @classmethod
    def dump(cls, message: Any) -> JSON:
        return _dump(message, {})

    def _flatten(self, result: Any) -> Iterator[Any]:
        import llm

        if isinstance(result, llm.Conversation | llm.AsyncConversation):
            yield from self._flatten(_conversation_chain(result))
        elif isinstance(result, llm.Response | llm.AsyncResponse):
            yield result  # it has .messages(), a method: the base would take it for a transcript
        else:
            yield from super()._flatten(result)

    def _wrap(self, item: Any) -> Message | Iterable[Message]:
        import llm
        from llm.parts import Message as Part

        if isinstance(item, str):
            return Message(Role.USER, item)
        if isinstance(item, llm.ToolResult):
            if item.attachments:
                raise cannot_carry(NAME, "a tool result with attachments")
            return Message(Role.TOOL, item.output, tool_call_id=item.tool_call_id, meta={"tool_name": item.name})
        if isinstance(item, Part):
            return _from_part_message(item, {})
        if isinstance(item, llm.Response | llm.AsyncResponse):
            return _from_response(item)
        raise TypeError(f"{NAME} transport cannot read {type(item).__name__}: expected an llm Response, "
                        "parts.Message, ToolResult, prompt string or Conversation")


def _dump(message: Any, names: dict[str, str]) -> Any:
    from llm.parts import Message as Part
    from llm.parts import TextPart, ToolCallPart, ToolResultPart

    role = role_of(message)
    files = getattr(message, "attachments", None)
    if files:  # never sent without them: the model would answer about a file it did not see
        raise cannot_carry(NAME, f"attachments ({', '.join(a.label for a in files)})")
    content = message.content or ""
    if role == "tool":
        return Part(role="tool", parts=[ToolResultPart(name=tool_name(NAME, message, names), output=content,
                                                       tool_call_id=message.tool_call_id)])
    parts: list[Any] = [TextPart(text=content)] if content or role != "assistant" else []
    if role == "assistant":
        for c in message.tool_calls or ():
            call = ToolCall.coerce(c)
            parts.append(ToolCallPart(name=call.name, arguments=dict(call.arguments), tool_call_id=call.id))
    return Part(role=role, parts=parts)


def _turn_start(chain: list[Any]) -> int:
    """Where the turn's input starts: the trailing ``tool`` message then ``user`` message, as ``llm`` appends them."""
    start = len(chain)
    if start and chain[start - 1].role == "user":
        start -= 1
    if start and chain[start - 1].role == "tool":
        start -= 1
    return start


def _conversation_chain(conversation: Any) -> list[Any]:
    if conversation.loaded_messages:
        return list(conversation.loaded_messages)
    if not conversation.responses:
        return []
    last = conversation.responses[-1]
    return [*last.prompt.messages, last]


def _from_part_message(message: Any, meta: dict[str, JSON]) -> list[Message]:
    from llm.parts import ReasoningPart, TextPart, ToolCallPart, ToolResultPart

    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ReasoningPart):
            thinking.append(part.text)
        elif isinstance(part, ToolCallPart) and not part.server_executed:
            calls.append(ToolCall(id=part.tool_call_id or "", name=part.name, arguments=dict(part.arguments)))
        elif isinstance(part, ToolResultPart) and not part.server_executed:
            if part.attachments:
                raise cannot_carry(NAME, "a tool result with attachments")
            result_meta: dict[str, JSON] = {"tool_name": part.name}
            if part.exception:
                result_meta["is_error"] = True
            results.append(Message(Role.TOOL, part.output, tool_call_id=part.tool_call_id, meta=result_meta))
        else:
            server = " run by the provider" if getattr(part, "server_executed", False) else ""
            raise cannot_carry(NAME, f"a {type(part).__name__}{server}")
    if message.role == "tool":
        if texts or calls:
            raise cannot_carry(NAME, "a tool message holding text or calls")
        return results
    if results:
        raise cannot_carry(NAME, f"tool results inside a {message.role!r} message")
    if thinking:
        meta["thinking"] = "\n\n".join(thinking)
    return [Message(message.role, "".join(texts), tool_calls=calls or None, meta=meta)]


def _from_response(response: Any) -> list[Message]:
    import llm

    if isinstance(response, llm.AsyncResponse):
        if not response._done:
            raise TypeError(f"{NAME} transport: await the AsyncResponse (await response.text()) before wrapping it")
        messages = response._messages_now()
    else:
        messages = response.messages()  # runs the prompt if nothing has read the response yet
    meta = response_meta({"model": response.resolved_model or response.model.model_id},
                         input_tokens=response.input_tokens, output_tokens=response.output_tokens)
    out: list[Message] = []
    for m in messages:
        out.extend(_from_part_message(m, dict(meta)))
    if out and out[-1].role == Role.ASSISTANT:
        out[-1] = out[-1].with_meta(finish_reason="tool_calls" if out[-1].tool_calls else "stop")
    return out
