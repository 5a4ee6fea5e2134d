"""Every reader of a reply's tokens counts the same number (issue 40 §2): the frame (from the log and from the
file), the cell footer, ``Budget``, ``map``'s row record, the cost, compaction's prompt size and the tracing span.

The number is the one genai-prices' ``extract_usage`` reads from the API's own usage block (input includes cache
reads and writes), for a reply received now through the real SDK of each API, and for a session line written
before the counts were normalised (Anthropic's raw ``input_tokens`` beside ``cached_tokens``), read the old way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import brute_nb
from brute_nb import Usage, agent
from brute_nb.message import Log
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider
from brute_nb.testing.script import Reply
from tests.providers.helpers import FACTORIES

FLAVOURS = {"anthropic": ("anthropic", "default"), "openai_chat": ("openai", "chat"),
            "openai_responses": ("openai", "responses")}
"""Each provider kind's genai-prices provider id and API flavour (which usage block ``extract_usage`` reads)."""

READ, WRITTEN, FRESH = 1_000, 100, 10
"""A reply that read 1,000 tokens from the prompt cache, wrote 100 to it and read 10 more (OpenAI's APIs report no
cache writes: there the 100 are plain input)."""


class Span:
    """What the tracing records on a span, kept."""

    def __init__(self) -> None:
        self.attributes: dict[str, Any] = {}

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value


def counts(log: Log, path: Path) -> dict[str, tuple[int, int]]:
    """(input tokens, cache reads) of the log's last reply, as each reader counts it."""
    from brute_nb.compaction.tokens import reported_input
    from brute_nb.cost import price, price_usage
    from brute_nb.map.row import _summarize
    from brute_nb.middleware.budget import Spent, _add
    from brute_nb.notebook.views.turn_model import TurnModel
    from brute_nb.tracing import _reply

    reply = log[-1]
    usage = reply.usage
    assert usage is not None
    frame_row, file_row = brute_nb.frame(log).iloc[-1], brute_nb.read_frame(path).iloc[-1]
    stats = TurnModel.of([reply]).stats(0)
    spent = Spent()
    _add(spent, reply)
    record: dict[str, Any] = {"error": None}
    _summarize(record, [reply])  # type: ignore[arg-type]
    span = Span()
    _reply(span, reply)
    priced = price_usage(usage, str(reply.meta["model"]), str(reply.meta["provider"]))
    assert price({**reply.meta, "cost": None}) == priced  # the cost is computed from the same counts
    return {
        "usage": (usage.input_tokens, usage.cache_read_tokens),
        "frame": (int(frame_row["input_tokens"]), int(frame_row["cached_tokens"])),
        "read_frame": (int(file_row["input_tokens"]), int(file_row["cached_tokens"])),
        "footer": (stats["input_tokens"], stats["cached_tokens"]),
        "budget": (spent.tokens - usage.output_tokens, usage.cache_read_tokens),
        "map": (record["input_tokens"], usage.cache_read_tokens),
        "compaction": (reported_input(reply) or 0, usage.cache_read_tokens),
        "tracing": (span.attributes["gen_ai.usage.input_tokens"],
                    span.attributes.get("gen_ai.usage.cache_read.input_tokens", 0)),
    }


def saved(log: Log, tmp_path: Path) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(m.to_json() + "\n" for m in log))
    return path


@pytest.mark.anyio
@pytest.mark.parametrize("kind", list(FACTORIES))
async def test_a_new_reply_is_counted_alike_by_every_reader(fake_provider: FakeProvider, kind: str,
                                                            tmp_path: Path) -> None:
    from genai_prices import extract_usage

    anthropic = kind == "anthropic"
    fake_provider.add(Reply(text="ok", prompt_tokens=FRESH if anthropic else FRESH + READ + WRITTEN,
                            cached_tokens=READ, cache_write_tokens=WRITTEN if anthropic else 0))
    env = await agent().run(FACTORIES[kind](fake_provider, stream=False)).astart("?")
    log = env["messages"]
    wire = log[-1].raw  # the reply as the API sent it
    provider_id, flavour = FLAVOURS[kind]
    expected = extract_usage({**wire, "model": "gpt-4.1" if not anthropic else "claude-sonnet-4-5"},
                             provider_id=provider_id, api_flavor=flavour).usage
    assert expected.input_tokens == FRESH + READ + WRITTEN  # the oracle reads the wire as the API means it
    meta = log[-1].meta  # normalised once, when the transport read the reply: no reader sees a raw count
    assert (meta["input_tokens"], meta["cache_read_tokens"]) == (expected.input_tokens, expected.cache_read_tokens)
    assert "cached_tokens" not in meta
    seen = counts(log, saved(log, tmp_path))
    assert seen == dict.fromkeys(seen, (expected.input_tokens, expected.cache_read_tokens))
    assert read_session(saved(log, tmp_path))[-1].usage == log[-1].usage  # the line keeps the counts as they are


OLD_LINES = {
    # Written before the counts were normalised: each provider's raw report, as its transport then kept it.
    "anthropic": {"provider": "anthropic", "model": "claude-sonnet-4-5", "input_tokens": FRESH,
                  "output_tokens": 5, "cached_tokens": READ, "cache_write_tokens": WRITTEN},
    "openai": {"provider": "openai", "model": "gpt-4.1", "input_tokens": FRESH + READ + WRITTEN,
               "output_tokens": 5, "cached_tokens": READ},
    "openai-responses": {"provider": "openai-responses", "model": "gpt-4.1",
                         "input_tokens": FRESH + READ + WRITTEN, "output_tokens": 5, "cached_tokens": READ},
}


@pytest.mark.parametrize("kind", list(OLD_LINES))
def test_an_old_session_line_is_read_the_old_way_by_every_reader(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [{"role": "user", "content": "?"}, {"role": "assistant", "content": "ok", "meta": OLD_LINES[kind]}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    log = Log(read_session(path))
    seen = counts(log, path)
    assert seen == dict.fromkeys(seen, (FRESH + READ + WRITTEN, READ))
    assert log[-1].usage == Usage(FRESH + READ + WRITTEN, 5, READ, WRITTEN if kind == "anthropic" else 0,
                                  reasoning_tokens=None)


def test_a_count_edited_in_the_frame_is_written_back_in_the_convention() -> None:
    from brute_nb.frames import log_from_frame

    log = Log()
    log.user("?")
    log.assistant("old", **OLD_LINES["anthropic"])
    log.assistant("new", provider="anthropic", model="claude-sonnet-4-5", input_tokens=1_110, output_tokens=5,
                  cache_read_tokens=READ, cache_write_tokens=WRITTEN)
    df = brute_nb.frame(log)
    assert list(df["input_tokens"])[1:] == [1_110, 1_110] and list(df["cached_tokens"])[1:] == [READ, READ]
    assert log_from_frame(df) == log  # nothing edited: every meta kept as it was, the old line's too
    df.loc[1, "input_tokens"] = 2_000
    df.loc[2, "cached_tokens"] = 900
    back = log_from_frame(df)
    assert back[1].usage == Usage(2_000, 5, READ, WRITTEN, reasoning_tokens=None)  # not 2,000 + the cache again
    assert back[2].meta["cache_read_tokens"] == 900 and back[2].usage is not None
    assert list(brute_nb.frame(back)["input_tokens"])[1:] == [2_000, 1_110]
