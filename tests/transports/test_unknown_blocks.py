"""A reply part of a kind brute_nb does not know never loses the turn (issue 42 §1, §4, §5): Anthropic content blocks
(the MCP connector's, compaction, a kind no API has yet) and Responses output items (remote MCP, image generation,
file search, a kind no API has yet) are read for what is known, kept whole in the message (and its session file),
sent back unchanged on the next request to the same API, shown as a quiet "provider block: KIND" row, and no
pydantic serializer warning reaches the cell. Through the real SDKs against the fake, streamed or not."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from brute_nb.message import Message
from brute_nb.notebook.views.turn_model import NOTICE, TurnModel
from brute_nb.testing import FakeProvider, Reply
from brute_nb.transports.anthropic import Anthropic
from brute_nb.transports.blocks import joined_text
from brute_nb.transports.openai import OpenAI
from brute_nb.transports.openai_responses import ResponsesItems
from tests.providers.helpers import FACTORIES
from tests.transports.recorded_blocks import (
    CHAT_PARTS,
    FUTURE_ANTHROPIC,
    FUTURE_RESPONSES,
    NEW_ANTHROPIC,
    NEW_RESPONSES,
)
from tests.transports.test_reply_blocks import sent_back, session_agent, two_turns

pytestmark = pytest.mark.anyio

ANTHROPIC_CASES = {**NEW_ANTHROPIC, "a kind no API has yet": FUTURE_ANTHROPIC}
RESPONSES_CASES = {**NEW_RESPONSES, "a kind no API has yet": FUTURE_RESPONSES}
UNKNOWN = {"mcp connector": [], "compaction": ["compaction"], "remote mcp": ["mcp_list_tools"],
           "image_generation_call": [], "file_search_call": []}
"""The kinds each reply shows as a "provider block" row: the ones brute_nb reads nothing of."""


@pytest.mark.parametrize("name", NEW_ANTHROPIC)
def test_new_anthropic_fixtures_have_the_beta_sdk_shapes(name: str) -> None:
    import anthropic.types.beta as beta
    import pydantic

    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
             "content": NEW_ANTHROPIC[name], "stop_reason": "end_turn", "stop_sequence": None,
             "usage": {"input_tokens": 1, "output_tokens": 1}}
    parsed = beta.BetaMessage.model_validate(reply)
    assert [b.type for b in parsed.content] == [b["type"] for b in NEW_ANTHROPIC[name]]
    turn = {"role": "assistant", "content": sent_back(NEW_ANTHROPIC[name])}
    pydantic.TypeAdapter(beta.BetaMessageParam).validate_python(turn)


@pytest.mark.parametrize("name", NEW_RESPONSES)
def test_new_responses_fixtures_have_the_sdks_shapes(name: str) -> None:
    import openai.types.responses as types
    import pydantic

    for item in NEW_RESPONSES[name]:
        parsed = pydantic.TypeAdapter(types.ResponseOutputItem).validate_python(item)
        assert parsed.type == item["type"]
        pydantic.TypeAdapter(types.ResponseInputItemParam).validate_python(item)


def serializer_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "serializ" in str(w.message)]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("name", ANTHROPIC_CASES)
async def test_anthropic_blocks_of_new_kinds_are_kept_and_go_back(fake_provider: FakeProvider, name: str,
                                                                  stream: bool, tmp_path: Any) -> None:
    blocks = ANTHROPIC_CASES[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reply, later = await two_turns(fake_provider, "anthropic", blocks, stream, tmp_path / "s.jsonl")
    assert serializer_warnings(caught) == []
    assert reply.content == joined_text(blocks)  # a block of a new kind between two texts: two paragraphs
    turn = next(t for t in later["messages"] if t["role"] == "assistant")
    assert turn["content"] == sent_back(blocks)
    read_back = Message.from_json(reply.to_json())
    assert Anthropic.dump(read_back)["content"] == sent_back(blocks)
    assert reply.meta.get("provider_blocks", []) == UNKNOWN.get(name, ["hologram"])


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("name", RESPONSES_CASES)
async def test_responses_items_of_new_kinds_are_kept_and_go_back(fake_provider: FakeProvider, name: str,
                                                                 stream: bool, tmp_path: Any) -> None:
    items = RESPONSES_CASES[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reply, later = await two_turns(fake_provider, "openai_responses", items, stream, tmp_path / "s.jsonl")
    assert serializer_warnings(caught) == []
    assert reply.content == "".join(p["text"] for i in items if i["type"] == "message" for p in i["content"]
                                    if p["type"] == "output_text")
    sent = later["input"]
    start = next(i for i, item in enumerate(sent) if item.get("id") == items[0]["id"])
    assert sent[start:start + len(items)] == sent_back(items)
    assert ResponsesItems.dump(Message.from_json(reply.to_json())) == sent_back(items)
    assert reply.meta.get("provider_blocks", []) == UNKNOWN.get(name, ["hologram", "output_hologram"])


def test_the_fake_takes_back_the_kinds_it_sent_and_refuses_others() -> None:
    """As the API: a kind it sent in a reply comes back accepted; one it never sent is refused."""
    from brute_nb.testing.rules import request_problems

    body = {"model": "m", "input": [{"role": "user", "content": "hi"}, *FUTURE_RESPONSES]}
    assert any("'hologram'" in p for p in request_problems("openai_responses", body))
    assert any("'output_hologram'" in p for p in request_problems("openai_responses", body))
    assert request_problems("openai_responses", body, also=frozenset({"hologram", "output_hologram"})) == []
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"},
                                                        {"role": "assistant", "content": FUTURE_ANTHROPIC}]}
    assert any("'hologram'" in p for p in request_problems("anthropic", body))
    assert request_problems("anthropic", body, also=frozenset({"hologram"})) == []


async def test_mcp_tool_use_shows_as_a_tool_the_provider_ran() -> None:
    m = Anthropic.wrap_one({"role": "assistant", "content": NEW_ANTHROPIC["mcp connector"]})
    (call,) = m.server_tool_calls
    assert (call["name"], call["arguments"], call["result"]) == ("echo", {"text": "hi"}, [{"type": "text",
                                                                                           "text": "hi"}])


@pytest.mark.parametrize("stream", [True, False])
async def test_a_reply_of_only_a_new_kind_goes_to_another_api_as_what_it_says(fake_provider: FakeProvider,
                                                                            stream: bool, tmp_path: Any) -> None:
    """The blocks are Anthropic's: the Responses API (and Chat) get the message's text, the kept blocks stay for
    the next Anthropic request."""
    fake_provider.add(Reply(blocks=tuple(FUTURE_ANTHROPIC)), "on the other API")
    path = tmp_path / "s.jsonl"
    await session_agent(FACTORIES["anthropic"](fake_provider, stream=stream), path).astart("go")
    await session_agent(FACTORIES["openai_responses"](fake_provider, stream=stream), path).astart("more")
    sent = fake_provider.requests[-1]["json"]["input"]
    assert "holo_01" not in str(sent) and "encrypted_payload" not in str(sent)
    assert {"type": "message", "role": "assistant", "content": "Here is the hologram."} in sent
    reply = Anthropic.wrap_one({"role": "assistant", "content": FUTURE_ANTHROPIC})
    assert OpenAI.dump(reply) == {"role": "assistant", "content": "Here is the hologram."}


def test_a_new_kind_is_one_quiet_row_in_the_cell() -> None:
    from brute_nb.notebook.views import render

    m = Anthropic.wrap_one({"role": "assistant", "content": [
        {"type": "compaction", "content": "x"}, {"type": "<b>odd</b>", "x": 1}, *FUTURE_ANTHROPIC]})
    rows = [s for s in TurnModel.of([m]).final_segments() if isinstance(s, tuple) and NOTICE in s[1]]
    assert [text for text, _ in rows] == ["provider block: compaction", "provider block: <b>odd</b>",
                                          "provider block: hologram"]
    assert {meta[NOTICE] for _, meta in rows} == {"note"}
    html = render.notice_bundle(rows[1][0], "note")["text/html"]
    assert "<b>odd" not in html and "&lt;b&gt;odd" in html
    from brute_nb.notebook.views.transcript_html import segments_html

    panel = segments_html(TurnModel.of([m]).final_segments())  # the chat panel and the exported transcript
    assert "provider block: hologram" in panel and "<b>odd" not in panel


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", ["anthropic", "openai_responses"])
async def test_an_empty_cited_text_stays_empty(fake_provider: FakeProvider, kind: str, stream: bool,
                                               tmp_path: Any) -> None:
    """``cited_text: ""`` is a value the API sent, not an absent one (issue 42 §4)."""
    if kind == "anthropic":
        blocks = [{"type": "text", "text": "Paris.", "citations": [
            {"type": "web_search_result_location", "url": "https://example.org/p", "title": "Paris",
             "cited_text": "", "encrypted_index": "Eo8B"}]}]
    else:
        blocks = [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [
            {"type": "output_text", "text": "Paris.", "annotations": [
                {"type": "url_citation", "url": "https://example.org/p", "title": "Paris", "start_index": 0,
                 "end_index": 0}]}]}]
    reply, _ = await two_turns(fake_provider, kind, blocks, stream, tmp_path / "s.jsonl")
    (citation,) = reply.meta["citations"]
    assert citation["cited_text"] == "" and citation["url"] == "https://example.org/p"


@pytest.mark.parametrize("api", ["anthropic", "openai_responses"])
def test_a_key_known_later_is_redacted_from_kept_blocks(monkeypatch: pytest.MonkeyPatch, api: str) -> None:
    """Kept blocks go back through the one redaction point (``sendable``) like the text: a block of a new kind
    quoting a key that became known after the reply arrived (``%env``) does not carry it back."""
    key = "sk-later-0123456789abcdef"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if api == "anthropic":
        reply = Anthropic.wrap_one({"role": "assistant", "content": [
            {"type": "hologram", "id": "holo_02", "note": f"the key is {key}"}, FUTURE_ANTHROPIC[1]]})
    else:
        reply = ResponsesItems.wrap_one({"output": [{"type": "hologram", "id": "holo_03", "note": key},
                                                    FUTURE_RESPONSES[1]]})
    log = [Message("user", "show me"), reply]
    dump = (lambda: Anthropic.dump_all(log)) if api == "anthropic" else (lambda: ResponsesItems.dump_all(log))
    assert key in str(dump())
    monkeypatch.setenv("OPENAI_API_KEY", key)
    sent = str(dump())
    assert key not in sent and "0123456789abcdef" not in sent
    assert "holo_0" in sent  # still sent back, with the key redacted


@pytest.mark.parametrize("stream", [True, False])
async def test_a_value_the_sdk_does_not_know_prints_no_serializer_warning(fake_provider: FakeProvider, stream: bool,
                                                                         tmp_path: Any) -> None:
    """A known block holding a value of a new kind (a citation location no SDK lists yet): the data is kept as sent
    and no pydantic "serializer warnings" UserWarning reaches the cell (issue 42 §5)."""
    cited = {"type": "text", "text": "Paris.", "citations": [
        {"type": "map_location", "cited_text": "Paris", "url": "https://example.org/map", "title": "Map",
         "latitude": 48.85}]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reply, later = await two_turns(fake_provider, "anthropic", [cited], stream, tmp_path / "s.jsonl")
    assert serializer_warnings(caught) == []
    assert reply.meta["citations"][0]["cited_text"] == "Paris"
    turn = next(t for t in later["messages"] if t["role"] == "assistant")
    assert turn["content"] == sent_back([cited])  # the new location's own field (latitude) included


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("name", CHAT_PARTS)
async def test_chat_content_parts_of_new_kinds_are_kept_and_the_text_goes_back(fake_provider: FakeProvider, name: str,
                                                                              stream: bool, tmp_path: Any) -> None:
    """A compatible server's reply whose content is a list holding a part brute_nb does not read (Mistral's thinking
    chunk, a kind no API has yet): its text read, the parts kept as received (through the session file), each unread
    kind one quiet row; before, the turn failed with a TypeError after the server billed it. The next request sends
    the message's text: the Chat transport serves many servers and cannot tell which one sent the parts, and a part
    one server sent, another refuses (the notebook user model switches servers)."""
    parts = CHAT_PARTS[name]
    reply, later = await two_turns(fake_provider, "openai_chat", parts, stream, tmp_path / "s.jsonl")
    text = "".join(p["text"] for p in parts if p["type"] == "text")
    assert reply.content == text
    turn = next(m for m in later["messages"] if m["role"] == "assistant")
    assert turn["content"] == text
    read_back = Message.from_json(reply.to_json())
    assert read_back.meta["blocks"] == {"openai_chat": sent_back(parts)}
    kinds = [p["type"] for p in parts if p["type"] != "text"]
    assert reply.meta["provider_blocks"] == kinds
    rows = [s for s in TurnModel.of([reply]).final_segments() if isinstance(s, tuple) and NOTICE in s[1]]
    assert [text for text, _ in rows] == [f"provider block: {k}" for k in kinds]


@pytest.mark.parametrize("stream", [True, False])
async def test_a_responses_value_the_sdk_does_not_know_prints_no_serializer_warning(
        fake_provider: FakeProvider, stream: bool, tmp_path: Any) -> None:
    """The Responses API's side of issue 42 §5: an annotation of a kind no SDK lists yet inside a known message
    item, streamed or not, is kept as sent and dumps without a pydantic "serializer warnings" UserWarning."""
    items = [{"type": "message", "id": "msg_map1", "status": "completed", "role": "assistant", "content": [
        {"type": "output_text", "text": "Paris.", "annotations": [
            {"type": "map_citation", "start_index": 0, "end_index": 5, "latitude": 48.85}]}]}]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reply, later = await two_turns(fake_provider, "openai_responses", items, stream, tmp_path / "s.jsonl")
    assert serializer_warnings(caught) == []
    assert reply.content == "Paris."
    assert sent_back(items)[0] in later["input"]  # the new annotation's own field (latitude) included


def test_the_fake_streams_a_new_item_kind_with_status_events_no_sdk_types() -> None:
    """An item of a kind no SDK has yet streams its own ``response.<kind>.*`` events, as the provider tools' items
    do; the reader must pass over events it does not know (the streamed cases above go through them)."""
    from brute_nb.testing.wire_responses import responses_sse

    events = "".join(responses_sse({"model": "m"}, Reply(blocks=tuple(FUTURE_RESPONSES)), 1))
    assert "event: response.hologram.in_progress" in events and "event: response.hologram.completed" in events
    remote = "".join(responses_sse({"model": "m"}, Reply(blocks=tuple(NEW_RESPONSES["remote mcp"])), 1))
    assert "response.mcp_list_tools.in_progress" in remote and "response.message." not in remote
