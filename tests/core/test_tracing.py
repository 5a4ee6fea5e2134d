"""OpenTelemetry spans (``brute_nb.tracing``): a turn, its model calls and its tool calls, after the GenAI semantic
conventions, through the real SDK clients against the fake provider; content only when asked for, and redacted;
nothing at all (not even an import) when no tracer provider is configured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import brute_nb
from brute_nb import tracing
from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.base import Provider
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.tools import tool
from brute_nb.usage import Usage

pytestmark = pytest.mark.anyio

KEY = "sk-ant-api03-tracingSECRETtracingSECRET0123456789"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool
def note(text: str) -> str:
    """Keep a note.

    Args:
        text: What to keep.
    """
    return f"kept: {text}"


@tool
def leak(text: str) -> str:
    """Fail, quoting the key the kernel holds.

    Args:
        text: Anything.
    """
    raise ValueError(f"bad {os.environ['ANTHROPIC_API_KEY']}")


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """An SDK tracer provider with an in-memory exporter, as the user's code would set one (not process-wide: the
    provider is what ``trace.get_tracer_provider`` answers during the test)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    yield exporter
    provider.shutdown()


def providers(fake: FakeProvider) -> dict[str, Provider]:
    return {
        "anthropic": AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0),
        "openai": OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0),
    }


def agent_for(provider: Provider, session: Path, tools: list[Any]) -> Any:
    return (brute_nb.agent().use(SessionLog, path=session).use(ToolResultLoop)
            .use(DefaultToolPipeline, tools=tools).run(provider))


def by_name(found: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    """brute_nb's spans by name (an SDK may record its own too: the anthropic SDK does, inside our chat span)."""
    out: dict[str, list[ReadableSpan]] = {}
    for span in found:
        if span.instrumentation_scope is not None and span.instrumentation_scope.name == tracing.SCOPE:
            out.setdefault(span.name, []).append(span)
    return out


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_a_turn_is_a_span_with_its_model_and_tool_calls_inside(
        kind: str, fake_provider: FakeProvider, spans: InMemorySpanExporter, tmp_path: Path) -> None:
    fake_provider.add(reply("Adding.", call("add", {"a": 2, "b": 3})), "It is 5.")
    provider = providers(fake_provider)[kind]
    env = await agent_for(provider, tmp_path / "demo.brute" / "maths.jsonl", [add]).astart("what is 2 + 3?")
    replies = [m for m in env["messages"] if m.role == "assistant"]

    found = by_name(spans.get_finished_spans())
    model = provider.model
    assert sorted(found) == sorted(["invoke_agent brute_nb", f"chat {model}", "execute_tool add"])
    (turn,), chats, (tool_span,) = found["invoke_agent brute_nb"], found[f"chat {model}"], found["execute_tool add"]
    assert len(chats) == 2
    assert turn.parent is None
    assert {s.parent.span_id for s in [*chats, tool_span]} == {turn.context.span_id}  # type: ignore[union-attr]
    assert chats[0].end_time <= tool_span.start_time and tool_span.end_time <= chats[1].start_time  # type: ignore[operator]

    assert turn.attributes is not None
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.conversation.id"] == "demo.brute/maths"
    total = Usage.total(replies)
    assert total is not None and total.input_tokens > 0
    assert turn.attributes["gen_ai.usage.input_tokens"] == total.input_tokens
    assert turn.attributes["gen_ai.usage.output_tokens"] == total.output_tokens

    for span, message in zip(chats, replies, strict=True):
        attributes = dict(span.attributes or {})
        usage = message.usage
        assert usage is not None
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == kind
        assert attributes["gen_ai.request.model"] == model
        assert attributes["gen_ai.response.model"] == message.meta["model"]
        assert attributes["gen_ai.response.finish_reasons"] == (message.meta["finish_reason"],)
        assert attributes["gen_ai.usage.input_tokens"] == usage.input_tokens
        assert attributes["gen_ai.usage.output_tokens"] == usage.output_tokens
        assert attributes["gen_ai.conversation.id"] == "demo.brute/maths"
        assert span.kind == trace.SpanKind.CLIENT

    tool_attributes = dict(tool_span.attributes or {})
    assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_attributes["gen_ai.tool.name"] == "add"
    assert tool_attributes["gen_ai.tool.call.id"] == replies[0].tool_calls[0].id
    assert tool_attributes["gen_ai.tool.description"].startswith("Add two numbers")
    assert "error.type" not in tool_attributes
    # Content is opt-in: none of it by default.
    recorded = json.dumps([dict(s.attributes or {}) for s in spans.get_finished_spans()], default=str)
    assert "what is 2 + 3?" not in recorded and "It is 5." not in recorded
    assert "gen_ai.tool.call.arguments" not in recorded
    # Whatever the SDK records itself nests inside the model call that made it.
    chat_ids = {s.context.span_id for s in chats}
    others = [s for s in spans.get_finished_spans() if s.instrumentation_scope.name != tracing.SCOPE]  # type: ignore[union-attr]
    assert all(s.parent is not None and s.parent.span_id in chat_ids for s in others)


async def test_a_failed_tool_call_is_marked_as_an_error(
        fake_provider: FakeProvider, spans: InMemorySpanExporter, tmp_path: Path) -> None:
    fake_provider.add(reply("", call("add", {"a": "two", "b": 3})), "Sorry.")
    await agent_for(providers(fake_provider)["anthropic"], tmp_path / "s.jsonl", [add]).astart("add")
    (tool_span,) = by_name(spans.get_finished_spans())["execute_tool add"]
    assert (tool_span.attributes or {})["error.type"] == "tool_error"
    assert tool_span.status.status_code == trace.StatusCode.ERROR


@tool
def missing(path: str) -> str:
    """Fail the way a tool reports a failure itself: a result text that starts with Error.

    Args:
        path: A file to read.
    """
    return f"Error: no such file {path}"


async def test_a_failed_tool_calls_status_names_only_the_error_class_without_content_capture(
        fake_provider: FakeProvider, spans: InMemorySpanExporter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The error text holds what the tool was given and found (paths, arguments): content, exported only when
    content capture is on (issue 39 §2.12). The class of what it raised is safe, and says what kind of failure."""
    monkeypatch.delenv(tracing.CAPTURE_CONTENT, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake_provider.add(reply("", call("leak", {"text": "x"}), call("missing", {"path": "/home/ada/payroll.csv"})),
                      "Sorry.")
    await agent_for(providers(fake_provider)["anthropic"], tmp_path / "s.jsonl", [leak, missing]).astart("leak")
    found = by_name(spans.get_finished_spans())
    (raised,), (reported,) = found["execute_tool leak"], found["execute_tool missing"]
    assert raised.status.status_code == reported.status.status_code == trace.StatusCode.ERROR
    assert raised.status.description == "ValueError"
    assert not reported.status.description  # a result text, no class: nothing but the error status
    recorded = json.dumps([[dict(s.attributes or {}), s.status.description] for s in spans.get_finished_spans()],
                          default=str)
    assert "payroll" not in recorded and "bad" not in recorded and "sk-ant" not in recorded


async def test_a_failed_tool_calls_error_status_holds_no_key_with_content_capture(
        fake_provider: FakeProvider, spans: InMemorySpanExporter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tracing.CAPTURE_CONTENT, "true")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake_provider.add(reply("", call("leak", {"text": "x"})), "Sorry.")
    await agent_for(providers(fake_provider)["anthropic"], tmp_path / "s.jsonl", [leak]).astart("leak")
    (tool_span,) = by_name(spans.get_finished_spans())["execute_tool leak"]
    assert str(tool_span.status.description).startswith("Error: ValueError: bad sk-ant-...REDACTED")
    assert KEY not in str(tool_span.status.description)


async def test_content_is_recorded_only_when_asked_and_never_a_key(
        fake_provider: FakeProvider, spans: InMemorySpanExporter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tracing.CAPTURE_CONTENT, "true")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake_provider.add(reply("Noting it.", call("note", {"text": f"the key is {KEY}"})), f"Noted {KEY}.")
    await agent_for(providers(fake_provider)["anthropic"], tmp_path / "s.jsonl", [note]).astart(
        f"remember my key {KEY}")
    found = by_name(spans.get_finished_spans())
    recorded = json.dumps([dict(s.attributes or {}) for s in spans.get_finished_spans()], default=str)
    assert KEY not in recorded
    chat = dict(found["chat claude-fake"][0].attributes or {})
    sent = json.loads(str(chat["gen_ai.input.messages"]))
    assert sent[0]["role"] == "user" and "remember my key" in sent[0]["parts"][0]["content"]
    assert "REDACTED" in sent[0]["parts"][0]["content"]
    answer = json.loads(str(chat["gen_ai.output.messages"]))
    assert answer[0]["parts"][1]["type"] == "tool_call" and answer[0]["parts"][1]["name"] == "note"
    tool_attributes = dict(found["execute_tool note"][0].attributes or {})
    assert "the key is" in str(tool_attributes["gen_ai.tool.call.arguments"])
    assert str(tool_attributes["gen_ai.tool.call.result"]).startswith("kept: the key is")


def test_no_tracer_provider_means_no_spans_and_no_import() -> None:
    """A kernel that never configured OpenTelemetry pays nothing: brute_nb does not even import it."""
    code = """
import sys
import brute_nb
from brute_nb.testing import Scripted
brute_nb.agent().run(Scripted(["hi"])).start("hello")
print("opentelemetry" in " ".join(sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"


def test_the_api_alone_is_not_a_tracer_provider() -> None:
    """Some library imported the OpenTelemetry API, but nobody set an SDK provider: nothing is recorded."""
    assert type(trace.get_tracer_provider()).__name__ in ("ProxyTracerProvider", "NoOpTracerProvider")
    assert tracing.tracer() is None


def test_a_tracer_asked_while_another_thread_imports_opentelemetry_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up thread imports ``opentelemetry.trace`` (the SDKs' ``opentelemetry.propagate`` does) while the
    first turn or map row asks for a tracer: the module is then in ``sys.modules`` half made, and reading it failed
    the turn with "partially initialized module" (issue 39 §2.1). Half made, nobody can have set a provider through
    it yet: nothing is traced, and the turn goes on. Here the import is held half way, in a real second thread."""
    import importlib.abc
    import importlib.machinery
    import threading
    from types import ModuleType

    started, finish = threading.Event(), threading.Event()

    class HeldHalfWay(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
            return importlib.machinery.ModuleSpec(name, self) if name == "opentelemetry.trace" else None

        def exec_module(self, module: ModuleType) -> None:
            started.set()
            finish.wait(60)
            module.get_tracer_provider = trace.get_tracer_provider  # type: ignore[attr-defined]

    import opentelemetry

    monkeypatch.setattr(opentelemetry, "trace", trace)  # the import below sets the package's attribute: put back
    monkeypatch.delitem(sys.modules, "opentelemetry.trace")
    monkeypatch.setattr(sys, "meta_path", [HeldHalfWay(), *sys.meta_path])
    importer = threading.Thread(target=importlib.import_module, args=("opentelemetry.trace",), daemon=True)
    importer.start()
    try:
        assert started.wait(60)
        assert "opentelemetry.trace" in sys.modules
        assert tracing.tracer() is None
    finally:
        finish.set()
        importer.join(60)
    assert tracing.tracer() is None  # imported whole now: the API's own provider, still not a real one
