"""An empty assistant reply is its own turn (issue 27 §3): the next request keeps user, assistant, user apart, in
the form each API accepts (the strict fake refuses an empty Anthropic turn anywhere but last)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brute_nb import agent
from brute_nb.message import Message, Role
from brute_nb.middleware import SessionLog
from brute_nb.testing import FakeProvider
from brute_nb.testing.rules import request_problems
from brute_nb.transports.anthropic import EMPTY_REPLY_TEXT, Anthropic
from tests.providers.helpers import FACTORIES

pytestmark = pytest.mark.anyio


def turns(kind: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    if kind == "openai_responses":
        return [(i["role"], i["content"]) for i in body["input"]]
    return [(m["role"], m["content"]) for m in body["messages"] if m["role"] != "system"]


@pytest.mark.parametrize("kind", list(FACTORIES))
async def test_an_empty_reply_stays_a_turn_between_the_user_turns(fake_provider: FakeProvider, kind: str,
                                                                  tmp_path: Path) -> None:
    fake_provider.add("", "Now I answer.")
    for prompt in ("first", "second"):
        await agent().use(SessionLog, path=tmp_path / "s.jsonl").run(FACTORIES[kind](fake_provider)).astart(prompt)
    empty = {"anthropic": EMPTY_REPLY_TEXT, "openai_chat": "", "openai_responses": ""}[kind]
    sent = turns(kind, fake_provider.requests[1]["json"])
    assert [role for role, _ in sent] == ["user", "assistant", "user"]
    assert sent[1][1] == empty
    assert "first" in str(sent[0][1]) and "second" in str(sent[2][1]) and "second" not in str(sent[0][1])


def test_an_empty_reply_last_is_not_sent_as_a_prefill() -> None:
    _, sent = Anthropic.dump_request([Message(Role.USER, "hi"), Message(Role.ASSISTANT, "")])
    assert sent == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("log", [
    [Message(Role.USER, "a"), Message(Role.ASSISTANT, " \n"), Message(Role.USER, "b")],
    [Message(Role.USER, "a"), Message(Role.ASSISTANT, ""), Message(Role.ASSISTANT, "then this"),
     Message(Role.USER, "b")],
    [Message(Role.ASSISTANT, ""), Message(Role.USER, "b")],
])
def test_every_request_with_empty_replies_is_one_the_api_accepts(log: list[Message]) -> None:
    _, sent = Anthropic.dump_request(log)
    assert not request_problems("anthropic", {"model": "m", "max_tokens": 1, "messages": sent})
    assert [t["role"] for t in sent] == ["user", "assistant", "user"]
