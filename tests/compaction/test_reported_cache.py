"""The prompt size compaction measures counts cached tokens the way each provider reports them."""

from __future__ import annotations

from brute_nb.compaction.tokens import reported_input
from brute_nb.message import Message, Role


def reply(**meta: object) -> Message:
    return Message(Role.ASSISTANT, "ok", meta=meta)


def test_anthropic_cache_reads_and_writes_are_part_of_the_prompt() -> None:
    # Anthropic's input_tokens is only the uncached tail: a 16k-token prompt read from cache reports 5.
    m = reply(provider="anthropic", input_tokens=5, cached_tokens=16_192, cache_write_tokens=801)
    assert reported_input(m) == 5 + 16_192 + 801


def test_openai_prompt_tokens_already_include_the_cached_part() -> None:
    m = reply(provider="openai", input_tokens=17_000, cached_tokens=16_000)
    assert reported_input(m) == 17_000


def test_no_report_is_none() -> None:
    assert reported_input(reply(provider="anthropic")) is None
