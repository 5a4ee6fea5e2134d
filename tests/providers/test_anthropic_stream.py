"""``anthropic_stream.StreamedReply`` adds raw stream events up to what the SDK's own ``messages.stream`` helper builds.

Each scripted reply is served twice by the fake server, in the API's SSE shape, and read by the real SDK both ways:
through the helper (its final message, dumped) and through ``messages.create(stream=True)`` into ``StreamedReply``. The
two must agree field by field (the helper's ``parsed_output``, which the provider never reads, aside).
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from brute_nb.providers.anthropic_stream import StreamedReply
from brute_nb.testing import FakeProvider, call
from brute_nb.testing import Reply as Scripted
from brute_nb.transports.anthropic import message_from
from brute_nb.transports.blocks import clean
from tests.transports.recorded_blocks import ANTHROPIC, FUTURE_ANTHROPIC, NEW_ANTHROPIC

SEARCH = {"name": "web_search", "arguments": {"query": "capital of France"},
          "result": [{"type": "web_search_result", "url": "https://example.org/paris", "title": "Paris",
                      "encrypted_content": "x", "page_age": None}]}
REPLIES = {
    "text": Scripted(text="Hello there, " * 30),
    "tool calls": Scripted(text="Let me look.", calls=(call("lookup", {"key": "k" * 200, "n": [1, 2, {"a": None}]}),
                                                        call("lookup", {}))),
    "thinking": Scripted(text="done", thinking="let me think " * 20),
    "citations": Scripted(text="Paris is the capital of France.",
                          citations=({"url": "https://example.org/paris", "title": "Paris",
                                      "cited_text": "capital of France"},)),
    "server tools, paused": Scripted(text="Searching.", server_calls=(SEARCH,), finish="pause_turn"),
    "cut at max_tokens": Scripted(text="cut", finish="max_tokens", cached_tokens=7, cache_write_tokens=3),
    "text after a server tool": Scripted(blocks=tuple(ANTHROPIC["web_search with citations"])),
}


NUMBERED = frozenset({"id", "tool_use_id", "signature", "encrypted_index"})
"""Fields the fake numbers per reply (two replies never share them): compared as present, not by value."""


def _comparable(data: Any) -> Any:
    """``data`` without the helper's ``parsed_output`` and with numbered fields as ``"<set>"``."""
    if isinstance(data, dict):
        return {k: "<set>" if k in NUMBERED and v else _comparable(v) for k, v in data.items()
                if k != "parsed_output"}
    if isinstance(data, list):
        return [_comparable(v) for v in data]
    return data


@pytest.mark.parametrize("name", list(REPLIES))
def test_reply_is_what_the_sdk_stream_helper_builds(fake_provider: FakeProvider, name: str) -> None:
    fake_provider.add(REPLIES[name], REPLIES[name])
    request: dict[str, Any] = {"model": "claude-fake", "max_tokens": 64,
                               "messages": [{"role": "user", "content": "go"}]}
    reply, pieces = StreamedReply(), []
    with anthropic.Anthropic(base_url=fake_provider.base_url, api_key=fake_provider.api_key,
                             max_retries=0) as client:
        with client.messages.stream(**request) as stream:
            helper = stream.get_final_message().model_dump(mode="json")
        with client.messages.create(**request, stream=True) as events:
            for event in events:
                piece = reply.add(event)
                if piece is not None:
                    pieces.append(piece)
    ours = reply.data()
    assert ours is not None
    assert _comparable(ours) == _comparable(helper)
    streamed = {kind: "".join(p for k, p in pieces if k == kind) for kind in ("text", "thinking")}
    # what streams is what the message will say: a new paragraph after a server tool's blocks (issue 41 item 4)
    assert streamed["text"] == message_from(ours).content
    assert streamed["thinking"] == "".join(b["thinking"] for b in ours["content"] if b["type"] == "thinking")


def test_events_before_message_start_are_ignored_and_no_start_is_no_reply() -> None:
    class Delta:
        type = "content_block_delta"
        index = 0

    reply = StreamedReply()
    assert reply.add(Delta()) is None
    assert reply.data() is None


FIRST_STREAM = """
import json
import anthropic.types as t
import pydantic.main
from brute_nb.providers.anthropic_stream import build_schemas
models = (t.Message, t.TextBlock, t.ToolUseBlock, t.ThinkingBlock, t.MessageDeltaUsage,
          t.raw_message_delta_event.Delta)
before = [m.__pydantic_complete__ for m in models]
build_schemas()
print(json.dumps({"before": before, "after": [m.__pydantic_complete__ for m in models],
                  "locked": getattr(pydantic.main, "_rebuild_lock", None) is not None}))
"""


def test_build_schemas_builds_what_a_first_stream_builds() -> None:
    """The SDK defers its models' schemas to first use; the warm-up builds them ahead with ``build_schemas`` (in a
    fresh process: this one's earlier tests have built them already). A pydantic without its own rebuild lock
    (before 2.14, the declared minimum among them) builds nothing here: the turn builds them, as before."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FIRST_STREAM], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert not any(got["before"]), got
    assert got["after"] == [got["locked"]] * len(got["after"]), got


def test_a_turn_waits_for_a_schema_build_in_progress(fake_provider: FakeProvider,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn that reads its stream while the warm-up thread builds the same pydantic models would race it: the
    turn waits on ``BUILD_LOCK`` instead. The build here ends only once the turn has read an event, or after 2 s:
    the order of the three marks says whether the turn waited."""
    import threading

    from brute_nb import agent
    from brute_nb.providers import anthropic_stream

    from .helpers import anthropic as provider

    marks: list[str] = []
    read = threading.Event()
    add = StreamedReply.add

    def reading(self: StreamedReply, event: Any) -> Any:
        marks.append("event") if not read.is_set() else None
        read.set()
        return add(self, event)

    monkeypatch.setattr(StreamedReply, "add", reading)
    fake_provider.add("hello")
    anthropic_stream.BUILD_LOCK.acquire()
    marks.append("build")

    def build() -> None:
        read.wait(2)
        marks.append("built")
        anthropic_stream.BUILD_LOCK.release()

    builder = threading.Thread(target=build)
    builder.start()
    try:
        assert agent().run(provider(fake_provider)).start("hi")["messages"][-1].content == "hello"
    finally:
        builder.join(10)
    assert marks == ["build", "built", "event"]


def test_waiting_for_the_schema_build_leaves_the_event_loop_running() -> None:
    """The turn waits for the warm-up's build off the loop: other turns and streams on brute_nb's one loop go on
    meanwhile (a lock taken on the loop thread would stop them all until the build ends)."""
    import threading

    import anyio

    from brute_nb.providers import anthropic_stream

    order: list[str] = []
    once = threading.Lock()

    def end_build() -> None:
        if once.acquire(blocking=False):
            anthropic_stream.BUILD_LOCK.release()

    anthropic_stream.BUILD_LOCK.acquire()
    release = threading.Timer(2.0, end_build)  # at the latest: never a hang

    async def other_turn() -> None:
        await anyio.sleep(0.05)
        order.append("other turn ran")
        end_build()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(other_turn)
            await anthropic_stream.schemas_built()
            order.append("built")

    release.start()
    try:
        anyio.run(main)
    finally:
        release.cancel()
    assert order == ["other turn ran", "built"]
    assert not anthropic_stream.BUILD_LOCK.locked()


@pytest.mark.parametrize("name", [*NEW_ANTHROPIC, "a kind no API has yet"])
def test_blocks_of_beta_and_new_kinds_add_up_as_the_beta_helper_builds_them(fake_provider: FakeProvider,
                                                                           name: str) -> None:
    """The MCP connector's blocks, a compaction (its summary in a ``compaction_delta``) and a block of a kind no API
    has yet, streamed by the fake in their SSE shapes: ``StreamedReply`` adds them up to what the SDK's beta helper
    (the one that knows these kinds) builds, as the request sends them back (``blocks.clean``)."""
    import warnings

    blocks = NEW_ANTHROPIC.get(name, FUTURE_ANTHROPIC)
    fake_provider.add(Scripted(blocks=tuple(blocks)), Scripted(blocks=tuple(blocks)))
    request: dict[str, Any] = {"model": "claude-fake", "max_tokens": 64,
                               "messages": [{"role": "user", "content": "go"}]}
    reply = StreamedReply()
    with anthropic.Anthropic(base_url=fake_provider.base_url, api_key=fake_provider.api_key,
                             max_retries=0) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the helper's own dump of a kind it does not know (issue 42 §5)
            with client.beta.messages.stream(**request) as stream:
                helper = stream.get_final_message().model_dump(mode="json", warnings=False)
        with client.messages.create(**request, stream=True) as events:
            for event in events:
                reply.add(event)
    ours = reply.data()
    assert ours is not None
    assert [clean(b) for b in _comparable(ours)["content"]] == [clean(b) for b in _comparable(helper)["content"]]
    assert [clean(b) for b in ours["content"]] == [clean(b) for b in blocks]
