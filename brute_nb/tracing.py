"""OpenTelemetry spans for every turn, model call and tool call, after the GenAI semantic conventions.

A turn is an ``invoke_agent brute_nb`` span; inside it each model call is a ``chat {model}`` span (provider, request
and response model, finish reasons, usage) and each tool call an ``execute_tool {name}`` span (tool name, call id,
``error.type`` when it failed). Every span carries the session (``gen_ai.conversation.id``) and, for a row of
``brute_nb.map``, the row (``brute_nb.map.row``). Prompt, reply, tool arguments and results are recorded only when the
user turns content capture on with the variable the OpenTelemetry GenAI instrumentations read,
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``, and then only as ``brute_nb.redact`` leaves them:
an exporter is a way out of the kernel like any other.

The invariant: tracing is free when no tracer provider is configured. brute_nb never imports OpenTelemetry itself;
it traces only when the user's code has imported ``opentelemetry.trace`` and set a real tracer provider (an SDK's),
so a kernel without one pays a dictionary lookup a turn, and the spans never change what a turn does.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from brute_nb.env import Env
from brute_nb.redact import redact, redact_value
from brute_nb.usage import Usage

CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
SCOPE = "brute_nb"
AGENT_NAME = "brute_nb"
_INACTIVE = frozenset({"ProxyTracerProvider", "NoOpTracerProvider"})

_last: list[Any] = [None, None]
"""The provider last asked and its tracer, so a turn does not ask the provider for one each time (one slot: a
kernel has one provider at a time, and a dict of every provider seen would keep them all alive)."""


def tracer() -> Any | None:
    """The tracer to record with, or None when no real tracer provider is configured (nothing is recorded)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None or _initializing(trace):
        return None
    provider = trace.get_tracer_provider()
    if type(provider).__name__ in _INACTIVE:
        return None
    if _last[0] is not provider:
        _last[:] = [provider, provider.get_tracer(SCOPE, _version())]
    return _last[1]


def _initializing(module: Any) -> bool:
    """Whether ``module`` is still being imported, by another thread (the warm-up's SDK import brings
    ``opentelemetry.trace`` in): it is in ``sys.modules`` from the start of its import, half made. Nobody can have
    set a tracer provider through a module not made yet, so there is nothing to trace, and no need to wait for it.
    ``__spec__._initializing`` is the flag the import system itself reads to tell (``importlib._bootstrap``)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version(SCOPE)
    except metadata.PackageNotFoundError:
        return None


def capturing_content() -> bool:
    return os.environ.get(CAPTURE_CONTENT, "").strip().lower() in {"1", "true", "yes", "on"}


def _common(env: Mapping[str, Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    if session := env.get("session"):
        attributes["gen_ai.conversation.id"] = str(session)
    if (row := env.get("map_row")) is not None:
        attributes["brute_nb.map.row"] = str(row)
    return attributes


def _provider_name(handler: Any) -> str | None:
    name = getattr(handler, "provider", None)  # brute_nb's providers name theirs (also in each reply's meta)
    return name if isinstance(name, str) else None


@contextlib.contextmanager
def turn(env: Env) -> Iterator[None]:
    """The turn's ``invoke_agent`` span around ``body``; its model and tool spans nest inside it."""
    found = tracer()
    if found is None:
        yield
        return
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT_NAME, **_common(env)}
    with _span(found, f"invoke_agent {AGENT_NAME}", "INTERNAL", attributes) as span:
        try:
            yield
        finally:
            _turn_end(span, env)


@contextlib.contextmanager
def _span(found: Any, name: str, kind: str, attributes: dict[str, Any]) -> Iterator[Any]:
    """The current span for the ``with`` block; an exception leaving it is recorded (OpenTelemetry's own
    recording) and named in ``error.type``, as the conventions ask."""
    from opentelemetry.trace import SpanKind

    with found.start_as_current_span(name, kind=getattr(SpanKind, kind), attributes=attributes) as span:
        try:
            yield span
        except BaseException as exc:
            span.set_attribute("error.type", type(exc).__qualname__)
            raise


REPLIES = "traced_replies"
"""``env["metadata"]`` key: the replies the turn's model calls returned (its usage is theirs added up)."""


def _turn_end(span: Any, env: Mapping[str, Any]) -> None:
    """What a turn only knows at its end: the session (SessionLog names it on the way in) and its usage."""
    for key, value in _common(env).items():
        span.set_attribute(key, value)
    replies = env.get("metadata", {}).get(REPLIES, [])
    usage = Usage.total(replies)
    if usage is not None:
        _set_usage(span, usage)
    if capturing_content() and replies:
        span.set_attribute("gen_ai.output.messages", _messages(replies[-1:]))


@contextlib.contextmanager
def model_call(env: Env, handler: Any) -> Iterator[None]:
    """A ``chat`` span around one call of the model; what the reply reports is added when it returns."""
    found = tracer()
    if found is None:
        yield
        return
    model = getattr(handler, "model", None)
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", **_common(env)}
    if isinstance(model, str):
        attributes["gen_ai.request.model"] = model
    if provider := _provider_name(handler):
        attributes["gen_ai.provider.name"] = provider
    log = env["messages"]
    start = len(log)
    if capturing_content():
        attributes["gen_ai.input.messages"] = _messages(list(log))
    name = f"chat {model}" if isinstance(model, str) else "chat"
    with _span(found, name, "CLIENT", attributes) as span:
        try:
            yield
        finally:
            replies = [m for m in list(env["messages"])[start:] if getattr(m, "role", None) == "assistant"]
            if replies:
                env.setdefault("metadata", {}).setdefault(REPLIES, []).extend(replies)
                _reply(span, replies[-1])


def _reply(span: Any, message: Any) -> None:
    meta: Mapping[str, Any] = getattr(message, "meta", None) or {}
    if isinstance(meta.get("model"), str):
        span.set_attribute("gen_ai.response.model", meta["model"])
    if isinstance(meta.get("provider"), str):
        span.set_attribute("gen_ai.provider.name", meta["provider"])
    if isinstance(meta.get("response_id"), str):
        span.set_attribute("gen_ai.response.id", meta["response_id"])
    if isinstance(meta.get("finish_reason"), str):
        span.set_attribute("gen_ai.response.finish_reasons", [meta["finish_reason"]])
    usage = Usage.of_meta(meta)
    if usage is not None:
        _set_usage(span, usage)
    if capturing_content():
        span.set_attribute("gen_ai.output.messages", _messages([message]))


def _set_usage(span: Any, usage: Usage) -> None:
    # The conventions' input count includes cache reads and writes, as Usage's does.
    span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
    if usage.cache_read_tokens:
        span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
    if usage.cache_write_tokens:
        span.set_attribute("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)


@contextlib.contextmanager
def tool_call(env: Mapping[str, Any], call: Any, description: str | None = None) -> Iterator[Any]:
    """An ``execute_tool`` span around one tool call; yields a function that records its result text (redacted
    here, so a turn with no tracer does not redact it only to drop it).

    A failure's text is content too (the paths and arguments the tool was given): without content capture its
    status says only the class of what the tool raised, if it raised."""
    found = tracer()
    if found is None:
        yield _ignore
        return
    attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": str(call.name),
                                  "gen_ai.tool.call.id": str(call.id), "gen_ai.tool.type": "function",
                                  **_common(env)}
    if description:
        attributes["gen_ai.tool.description"] = description
    if capturing_content():
        attributes["gen_ai.tool.call.arguments"] = json.dumps(redact_value(call.arguments), ensure_ascii=False,
                                                              default=str)
    with _span(found, f"execute_tool {call.name}", "INTERNAL", attributes) as span:

        def finished(text: str, is_error: bool, error_class: str | None = None) -> None:
            if is_error:
                span.set_attribute("error.type", "tool_error")
                from opentelemetry.trace import Status, StatusCode

                span.set_status(Status(StatusCode.ERROR, redact(text)[:200] if capturing_content() else error_class))
            elif capturing_content():
                span.set_attribute("gen_ai.tool.call.result", redact(text))

        yield finished


def _ignore(text: str, is_error: bool, error_class: str | None = None) -> None:
    """The result recorder when nothing is traced."""


def _messages(messages: list[Any]) -> str:
    """Messages in the conventions' JSON shape (role and parts), redacted: only with content capture on."""
    out = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        if getattr(m, "content", ""):
            parts.append({"type": "text", "content": redact(str(m.content))})
        for call in getattr(m, "tool_calls", None) or ():
            parts.append({"type": "tool_call", "id": call.id, "name": call.name,
                          "arguments": redact_value(call.arguments)})
        if getattr(m, "tool_call_id", None) is not None:
            parts = [{"type": "tool_call_response", "id": m.tool_call_id,
                      "response": redact(str(m.content))}]
        out.append({"role": str(m.role), "parts": parts})
    return json.dumps(out, ensure_ascii=False, default=str)
