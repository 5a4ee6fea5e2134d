"""The fake refuses a body field its endpoint does not know, as the real APIs do, seen through the real SDKs:
a fake that took one would hide a body brute_nb built wrong."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from brute_nb.testing import FakeProvider, reply

REFUSED = {
    "anthropic": {"type": "error", "error": {"type": "invalid_request_error",
                                             "message": "bogus: Extra inputs are not permitted"}},
    "openai": {"error": {"message": "Unrecognized request argument supplied: bogus", "type": "invalid_request_error",
                         "param": None, "code": None}},
}


@pytest.fixture
def clients(fake_provider: FakeProvider) -> Iterator[dict[str, Any]]:
    import anthropic
    import openai

    made = {"anthropic": anthropic.Anthropic(base_url=fake_provider.base_url, api_key=fake_provider.api_key,
                                             max_retries=0),
            "openai": openai.OpenAI(base_url=fake_provider.openai_base_url, api_key=fake_provider.api_key,
                                    max_retries=0)}
    yield made
    for client in made.values():
        client.close()


def create(clients: dict[str, Any], api: str, stream: bool, **kw: Any) -> Any:
    """One request of ``api`` through its SDK (a stream read to its end)."""
    if api == "anthropic":
        answer = clients["anthropic"].messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}], stream=stream, **kw)
    elif api == "openai_chat":
        answer = clients["openai"].chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=stream, **kw)
    else:
        answer = clients["openai"].responses.create(model="m", input="hi", stream=stream, **kw)
    return list(answer) if stream else answer


@pytest.mark.parametrize("stream", [False, True], ids=["sync", "stream"])
@pytest.mark.parametrize("api", ["anthropic", "openai_chat", "openai_responses"])
def test_an_unknown_body_field_is_refused_as_the_real_api_refuses_it(
        fake_provider: FakeProvider, clients: dict[str, Any], api: str, stream: bool) -> None:
    import anthropic
    import openai

    fake_provider.add(reply("never sent"))
    with pytest.raises((anthropic.BadRequestError, openai.BadRequestError)) as info:
        create(clients, api, stream, extra_body={"bogus": 1})
    assert info.value.status_code == 400
    assert info.value.response.json() == REFUSED["anthropic" if api == "anthropic" else "openai"]
    assert fake_provider.script  # the reply was not spent on a refused request


def test_a_beta_body_field_needs_the_beta_header(fake_provider: FakeProvider, clients: dict[str, Any]) -> None:
    """``fallbacks`` is declared only by the SDK's beta create params: the plain endpoint does not know it."""
    import anthropic

    fallbacks = {"fallbacks": [{"model": "other"}]}
    with pytest.raises(anthropic.BadRequestError, match="fallbacks: Extra inputs are not permitted"):
        create(clients, "anthropic", False, extra_body=fallbacks)
    fake_provider.add(reply("ok"))
    answer = create(clients, "anthropic", False, extra_body=fallbacks,
                    extra_headers={"anthropic-beta": "some-beta-2026-01-01"})
    assert answer.content[0].text == "ok"


def test_with_the_rules_off_an_unknown_field_is_taken(clients: dict[str, Any]) -> None:
    import anthropic

    with FakeProvider([reply("ok")], enforce_rules=False) as fake, \
            anthropic.Anthropic(base_url=fake.base_url, api_key=fake.api_key, max_retries=0) as client:
        answer = client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}],
                                        extra_body={"bogus": 1})
    assert answer.content[0].text == "ok"
