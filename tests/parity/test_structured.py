"""Structured output through each provider's native option, validated, against the strict fake server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from brute_nb.message import Message
from brute_nb.providers.schema_formats import json_schema
from brute_nb.structured import StructuredOutputError
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.testing.rules import request_problems

from .helpers import FACTORIES, KINDS, tool_agent

pytestmark = pytest.mark.anyio


class Person(BaseModel):
    name: str
    age: int


class People(BaseModel):
    people: list[Person]


PERSON_DICT = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
               "required": ["name", "age"]}


def sent_schema(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    if kind == "openai_chat":
        assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"]
        return body["response_format"]["json_schema"]["schema"]  # type: ignore[no-any-return]
    if kind == "openai_responses":
        assert body["text"]["format"]["type"] == "json_schema" and body["text"]["format"]["name"] == "Person"
        return body["text"]["format"]["schema"]  # type: ignore[no-any-return]
    assert body["output_config"]["format"]["type"] == "json_schema"
    return body["output_config"]["format"]["schema"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", KINDS)
async def test_a_pydantic_schema_uses_the_native_option_and_parses(fake_provider: FakeProvider, kind: str,
                                                                   stream: bool) -> None:
    fake_provider.add(reply("", call("read", {"file_path": "ada.txt"})), '{"name": "Ada", "age": 36}')
    env = await tool_agent(FACTORIES[kind](fake_provider, stream=stream)).astart("who?", schema=Person)
    for request in fake_provider.requests:
        schema = sent_schema(kind, request["json"])
        assert schema["properties"]["age"]["type"] == "integer" and schema["additionalProperties"] is False
    m = env["messages"][-1]
    assert m.parsed == Person(name="Ada", age=36) and isinstance(m.parsed, Person)
    assert m.meta["schema"] == f"{__name__}:Person"
    assert "schema" not in env["messages"][1].meta  # the tool-call step is not the structured reply
    assert Message.from_json(m.to_json()).parsed == Person(name="Ada", age=36)  # rebuilt from the name alone


@pytest.mark.parametrize("kind", KINDS)
async def test_a_dict_schema_gives_the_json_value(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add('{"name": "Ada", "age": 36}')
    env = await tool_agent(FACTORIES[kind](fake_provider), tools=[]).astart("who?", schema=PERSON_DICT)
    assert env["messages"][-1].parsed == {"name": "Ada", "age": 36}
    assert env["messages"][-1].meta["schema"] == "json_schema"


@pytest.mark.parametrize("kind", KINDS)
async def test_a_reply_that_fails_validation_names_the_field_and_is_kept(fake_provider: FakeProvider,
                                                                         kind: str) -> None:
    fake_provider.add('{"name": "Ada", "age": "very old"}')
    a = tool_agent(FACTORIES[kind](fake_provider), tools=[])
    with pytest.raises(StructuredOutputError, match=r"Person: age: Input should be a valid integer.*'very old'"):
        await a.astart("who?", schema=Person)
    kept = a.messages[-1]
    assert kept.role == "assistant" and "very old" in kept.content


async def test_dict_schema_failures_name_the_field_too(fake_provider: FakeProvider) -> None:
    fake_provider.add('{"name": 7}')
    a = tool_agent(FACTORIES["openai_chat"](fake_provider), tools=[])
    with pytest.raises(StructuredOutputError) as err:
        await a.astart("who?", schema=PERSON_DICT)
    assert "name: expected string, got 7" in str(err.value) and "age: Field required" in str(err.value)


async def test_a_list_of_records_becomes_a_dataframe(fake_provider: FakeProvider) -> None:
    fake_provider.add(json.dumps({"people": [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]}))
    env = await tool_agent(FACTORIES["anthropic"](fake_provider), tools=[]).astart("who?", schema=People)
    df = env["messages"][-1].parsed_df
    assert list(df.columns) == ["name", "age"] and df["age"].tolist() == [36, 41]
    with pytest.raises(StructuredOutputError, match="list of records"):
        Message("assistant", '{"a": 1}').parsed_df  # noqa: B018


async def test_a_bad_schema_is_refused_before_anything_is_sent(fake_provider: FakeProvider) -> None:
    a = tool_agent(FACTORIES["openai_chat"](fake_provider), tools=[])
    with pytest.raises(StructuredOutputError, match="pydantic model class or a JSON-schema dict"):
        await a.astart("who?", schema={"type": "string"})
    assert fake_provider.requests == []


def test_the_fake_refuses_a_schema_strict_mode_would_refuse() -> None:
    loose = {"type": "object", "properties": {"name": {"type": "string"}}}
    chat = {"model": "m", "messages": [{"role": "user", "content": "x"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "P", "schema": loose, "strict": True}}}
    assert any("additionalProperties" in p for p in request_problems("openai_chat", chat))
    assert any("Missing 'name'" in p for p in request_problems("openai_chat", chat))
    anthropic = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}],
                 "output_config": {"format": {"type": "json_schema", "schema": loose}}}
    assert request_problems("anthropic", anthropic)
    anthropic["output_config"] = {"format": {"type": "json_schema", "schema": json_schema(loose)}}
    assert request_problems("anthropic", anthropic) == []


def test_plain_text_parses_to_none() -> None:
    assert Message("assistant", "hello").parsed is None
    assert Message("assistant", "[1, 2]").parsed == [1, 2]
