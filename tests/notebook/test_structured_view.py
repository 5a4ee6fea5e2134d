"""A structured reply (``--schema``) shows as a table or indented JSON, not one JSON line (issue 32, item 10); the
log keeps the compact JSON the model wrote. Both APIs, through their real SDK clients against the fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from brute_nb.event_loop import run_sync
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.notebook.views.display import CellView
from brute_nb.notebook.views.structured_view import MAX_ROWS, structured_bundle
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import FakeProvider


class Month(BaseModel):
    month: str
    sales: float


class Sales(BaseModel):
    months: list[Month]
    note: str


REPLY = json.dumps({"months": [{"month": "January", "sales": 3.0}, {"month": "February", "sales": 4.5}],
                    "note": "<b>rising</b>"})


def cell_turn(nb: NotebookAgent, prompt: str, **extra: Any) -> list[dict[str, Any]]:
    published: list[dict[str, Any]] = []
    view = CellView(publish=lambda bundle, *a, **k: published.append(dict(bundle)), update=lambda *a, **k: None)
    view.attach(nb.agent)
    try:
        env = run_sync(lambda: nb.aask(prompt, **extra))
    finally:
        view.detach(nb.agent)
    view.finish(env=env)
    return published


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_structured_reply_shows_as_tables(tmp_path: Path, fake: FakeProvider, api: str) -> None:
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(root=tmp_path, tools=[]))
    if api == "anthropic":
        nb.provider = AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)
    else:
        nb.provider = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
    fake.add(REPLY)
    shown = cell_turn(nb, "the sales, please", schema=Sales)
    reply = next(b for b in shown if "January" in b["text/plain"])
    html = reply["text/html"]
    assert "brute-structured" in html
    assert html.count("<table") == 2  # the object, and its list of months as a table inside it
    assert ">month</th>" in html and ">sales</th>" in html and ">February</span></td>" in html and ">4.5</td>" in html
    assert "&lt;b&gt;rising&lt;/b&gt;" in html and "<b>rising" not in html  # the model's text is never markup
    assert reply["text/plain"] == json.dumps(json.loads(REPLY), indent=2)
    assert nb.last.content == REPLY  # the log keeps what the model wrote
    assert nb.last.parsed.months[1].sales == 4.5


def test_a_reply_without_a_schema_is_text(tmp_path: Path, fake: FakeProvider) -> None:
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(root=tmp_path, tools=[]))
    nb.provider = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
    fake.add('{"a": 1}')
    reply = next(b for b in cell_turn(nb, "json, please") if '"a"' in b["text/plain"])
    assert "<table" not in reply["text/html"] and reply["text/plain"] == '{"a": 1}'


def test_records_get_one_column_per_key_in_first_seen_order() -> None:
    bundle = structured_bundle(json.dumps([{"b": 1, "a": [1, 2]}, {"c": None, "b": {"x": True}}]))
    assert bundle is not None
    html = bundle["text/html"]
    heads = [part.split("<")[0] for part in html.split("font-weight:600\">")[1:4]]
    assert heads == ["b", "a", "c"]
    assert ">1, 2</td>" in html  # a list of scalars reads as a list
    assert "null" in html and "true" in html  # nested object as its own table


def test_long_tables_are_cut_and_say_where_the_rest_is() -> None:
    rows = [{"n": i} for i in range(MAX_ROWS + 5)]
    bundle = structured_bundle(json.dumps(rows))
    assert bundle is not None
    assert bundle["text/html"].count("<tr>") == MAX_ROWS + 1  # the heading and MAX_ROWS rows
    assert "5 more rows" in bundle["text/html"] and "parsed_df" in bundle["text/html"]


@pytest.mark.parametrize("text", ["not json", '{"cut off', ""])
def test_text_that_is_not_json_is_left_to_the_text_view(text: str) -> None:
    assert structured_bundle(text) is None


def test_scalars_and_empty_values_are_indented_json() -> None:
    for value in ([], {}, 3, "x", [1, [2]]):
        bundle = structured_bundle(json.dumps(value))
        assert bundle is not None and "<pre" in bundle["text/html"]
        assert bundle["text/plain"] == json.dumps(value, indent=2)
