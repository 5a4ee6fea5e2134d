"""A citation or a provider-run tool's result keeps each value the API sent (issue 42 §4): an empty string or an
empty list is a value, not an absent field, whatever the citation's kind and whichever API sent it. Through the real
SDKs against the fake, streamed or not: ``meta["citations"]`` is ``{"type", "url", "title", "cited_text"}`` with
None only for a field the API did not send."""

from __future__ import annotations

from typing import Any

import pytest

from brute_nb.testing import FakeProvider, Reply
from tests.providers.helpers import FACTORIES, tool_agent
from tests.transports.test_reply_blocks import two_turns

pytestmark = pytest.mark.anyio

ANTHROPIC = [{"type": "text", "text": "Paris.", "citations": [
    {"type": "web_search_result_location", "url": "https://example.org/p", "title": "", "cited_text": "",
     "encrypted_index": "Eo8B"},
    {"type": "char_location", "cited_text": "Paris", "document_index": 0, "document_title": "",
     "start_char_index": 0, "end_char_index": 5},
    {"type": "page_location", "cited_text": "Paris", "document_index": 1, "document_title": None,
     "start_page_number": 1, "end_page_number": 2}]}]

RESPONSES = [
    {"type": "file_search_call", "id": "fs_1", "status": "completed", "queries": ["capital"], "results": []},
    {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [
        {"type": "output_text", "text": "Paris.", "annotations": [
            {"type": "url_citation", "url": "https://example.org/p", "title": "", "start_index": 0, "end_index": 5},
            {"type": "file_citation", "file_id": "file-1", "filename": "", "index": 0},
            {"type": "file_citation", "file_id": "file-2", "filename": "notes.txt", "index": 6}]}]}]


@pytest.mark.parametrize("stream", [True, False])
async def test_anthropic_citations_keep_empty_titles(fake_provider: FakeProvider, stream: bool, tmp_path: Any) -> None:
    reply, _ = await two_turns(fake_provider, "anthropic", ANTHROPIC, stream, tmp_path / "s.jsonl")
    assert [(c["type"], c["url"], c["title"], c["cited_text"]) for c in reply.meta["citations"]] == [
        ("web_search_result_location", "https://example.org/p", "", ""),
        ("char_location", None, "", "Paris"),
        ("page_location", None, None, "Paris")]


@pytest.mark.parametrize("stream", [True, False])
async def test_responses_annotations_and_search_results_keep_empty_values(fake_provider: FakeProvider, stream: bool,
                                                                          tmp_path: Any) -> None:
    reply, _ = await two_turns(fake_provider, "openai_responses", RESPONSES, stream, tmp_path / "s.jsonl")
    assert [(c["type"], c["url"], c["title"], c["cited_text"]) for c in reply.meta["citations"]] == [
        ("url_citation", "https://example.org/p", "", "Paris"),
        ("file_citation", None, "", None),
        ("file_citation", None, "notes.txt", None)]
    (search,) = reply.meta["server_tool_calls"]
    assert (search["name"], search["result"]) == ("file_search", [])  # it found nothing: not its status


@pytest.mark.parametrize("stream", [True, False])
async def test_chat_url_citations_keep_an_empty_title(fake_provider: FakeProvider, stream: bool) -> None:
    fake_provider.add(Reply(text="Paris.", citations=({"url": "https://example.org/p", "title": "",
                                                       "cited_text": "Paris"},)))
    env = await tool_agent(FACTORIES["openai_chat"](fake_provider, stream=stream)).astart("capital?")
    (citation,) = env["messages"][-1].meta["citations"]
    assert (citation["url"], citation["title"], citation["cited_text"]) == ("https://example.org/p", "", "Paris")
