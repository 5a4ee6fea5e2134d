"""brute_nb.estimate: a map's rows, tokens and cost before anything is sent, through the real anthropic SDK
against the fake (whose count_tokens endpoint counts as it bills)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import brute_nb
from brute_nb.providers.token_count import ENDPOINT, ESTIMATE
from brute_nb.testing import FakeProvider
from tests.map.conftest import paid

PRICED = "anthropic:claude-haiku-4-5"


def reviews(n: int) -> pd.DataFrame:
    return pd.DataFrame({"review": [f"review number {i} says something" for i in range(n)]})


def test_nothing_is_sent_and_the_input_is_what_the_map_then_pays(server: FakeProvider, notebook: Path) -> None:
    df = reviews(6)
    est = brute_nb.estimate("Classify: {review}", df, model=PRICED, system="One word.")
    assert paid(server) == [] and len(server.counted) == 6
    assert (est.rows, est.cached, est.requests) == (6, 0, 6)
    assert est.method == ENDPOINT and est.exact
    assert est.output_tokens == (0, 16_000 * 6) and "max_tokens=16,000" in est.output_basis
    assert est.cost is not None and est.cost[1] is not None and 0 < est.cost[0] < est.cost[1]
    assert est.batch_cost == (est.cost[0] / 2, est.cost[1] / 2)
    out = brute_nb.map("Classify: {review}", df, model=PRICED, system="One word.", progress=False)
    assert int(out["input_tokens"].sum()) == est.input_tokens


def test_answered_rows_are_free_and_tighten_the_output(server: FakeProvider, notebook: Path) -> None:
    from brute_nb.providers.anthropic import DEFAULT_MAX_TOKENS

    df = reviews(5)
    brute_nb.map("Say {review}", df.head(2), model=PRICED, progress=False)
    est = brute_nb.estimate("Say {review}", df, model=PRICED)
    assert (est.rows, est.cached, est.requests) == (5, 2, 3)
    answered = brute_nb.map("Say {review}", df.head(2), model=PRICED, progress=False)["output_tokens"]
    low, high = int(answered.min()), int(answered.max())
    assert est.output_tokens == (low * 3, DEFAULT_MAX_TOKENS * 3)  # the answers tighten the low end, not the top
    each = f"{low:,}" if low == high else f"{low:,} to {high:,}"
    assert f"2 rows of this run already answered wrote {each} tokens a row" in est.output_basis
    assert est.cost is not None and est.cost[1] is not None and est.likely is not None
    assert est.cost[0] == est.likely[0] and est.likely[1] is not None and est.likely[1] < est.cost[1]
    assert "3 requests to send" in repr(est) and "exact: count_tokens endpoint" in repr(est)


def test_equal_rows_are_counted_once(server: FakeProvider, notebook: Path) -> None:
    df = pd.DataFrame({"review": ["same", "same", "other"]})
    est = brute_nb.estimate("Say {review}", df, model=PRICED)
    assert est.requests == 2 and len(server.counted) == 2


def test_an_unpriced_model_says_so_and_the_high_end_is_unknown(server: FakeProvider, notebook: Path) -> None:
    est = brute_nb.estimate("Say {review}", reviews(2), model="anthropic:claude-fake")
    assert est.cost is None and est.high is None
    assert "unknown (the price table does not know this model)" in repr(est)


def test_a_long_shared_prefix_is_priced_with_the_prompt_cache(server: FakeProvider, notebook: Path) -> None:
    system = "Follow the house style guide. " * 300  # well over the 1,024 tokens the APIs cache
    est = brute_nb.estimate("Say {review}", reviews(4), model=PRICED, system=system)
    assert est.shared_prefix >= 1024
    assert est.cached_cost is not None and est.cost is not None and est.cached_cost[0] < est.cost[0]
    assert "with prompt caching" in repr(est)


def test_without_an_endpoint_or_a_tokenizer_it_is_an_estimate(server: FakeProvider, notebook: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import brute_nb.compaction.tokens as tokens

    monkeypatch.setattr(tokens, "default_tokenizer", lambda: tokens.chars_per_four)
    monkeypatch.setenv("OPENAI_API_KEY", server.api_key or "")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    before = server.received
    est = brute_nb.estimate("Say {review}", reviews(3), model="openai:gpt-4.1", max_tokens=50)
    assert est.method == ESTIMATE and not est.exact and "estimated" in repr(est)
    assert server.received == before  # OpenAI has no count endpoint: nothing was sent
    assert est.output_tokens == (0, 150) and est.cost is not None


def test_bad_arguments_are_refused_before_anything_is_counted(server: FakeProvider, notebook: Path) -> None:
    with pytest.raises(brute_nb.BruteError, match="revew"):
        brute_nb.estimate("Say {revew}", reviews(2), model=PRICED)
    assert server.counted == []


def test_the_magic_estimates_with_over_and_sends_nothing(server: FakeProvider, notebook: Path) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from brute_nb.map import Estimate

    shell = InteractiveShell()
    try:
        shell.extension_manager.load_extension("brute_nb")
        shell.user_ns["df"] = reviews(3)
        result = shell.run_cell_magic("brute", f"--over df --model {PRICED} --estimate", "Say {review}\n")
    finally:
        InteractiveShell.clear_instance()
    assert isinstance(result, Estimate) and result.requests == 3 and result.exact
    assert paid(server) == [] and len(server.counted) == 3


def test_with_tools_the_first_call_is_counted_and_the_note_says_so(server: FakeProvider, notebook: Path) -> None:
    bare = brute_nb.estimate("Say {review}", reviews(2), model=PRICED)
    tooled = brute_nb.estimate("Say {review}", reviews(2), model=PRICED, tools="read-only")
    assert tooled.input_tokens > bare.input_tokens  # the tools' schemas are part of what is read
    assert "tools" in server.counted[-1] and "counts the first call of each row" in tooled.note


def test_a_provider_without_a_request_is_counted_from_its_prompt_text(server: FakeProvider, notebook: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import brute_nb.compaction.tokens as tokens
    from brute_nb.testing import Scripted

    monkeypatch.setattr(tokens, "default_tokenizer", lambda: tokens.chars_per_four)
    est = brute_nb.estimate("Say {review}", pd.DataFrame({"review": ["x" * 36]}), model=Scripted(["hi"]),
                            system="s" * 40)
    assert est.method == ESTIMATE and est.input_tokens == (40 + 1 + 40) // 4 + 1  # system, newline, prompt
    assert est.cost is None and server.counted == []


def test_the_accessor_estimates_like_the_function(server: FakeProvider, notebook: Path) -> None:
    df = reviews(2)
    assert repr(df.brute.estimate("Say {review}", model=PRICED)) == repr(
        brute_nb.estimate("Say {review}", df, model=PRICED))
    assert paid(server) == []


def test_a_reply_bound_given_as_an_option_bounds_the_output(server: FakeProvider, notebook: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.map import cost_estimate
    from brute_nb.providers import auto

    provider = auto("openai:gpt-4.1", base_url=server.openai_base_url, api_key=server.api_key,
                    max_completion_tokens=100)
    est = brute_nb.estimate("Say {review}", reviews(3), model=provider)
    assert est.output_tokens == (0, 300) and "max_tokens=100" in est.output_basis
    unknown = auto("openai:gpt-4.1", base_url=server.openai_base_url, api_key=server.api_key)
    monkeypatch.setattr(cost_estimate, "context_window", lambda kind, model: None)  # a model with no known window
    unbounded = brute_nb.estimate("Say {review}", reviews(3), model=unknown)
    assert unbounded.output_tokens == (0, None) and unbounded.high is None
    assert "no upper bound" in repr(unbounded)


@pytest.mark.parametrize("flag", ["--estimate", "--batch", "--concurrency 4"])
def test_a_map_only_option_without_over_is_refused_and_nothing_is_sent(server: FakeProvider, notebook: Path,
                                                                        flag: str) -> None:
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell()
    try:
        shell.extension_manager.load_extension("brute_nb")
        with pytest.raises(UsageError, match=f"{flag.split()[0]} works with --over") as refused:
            shell.run_cell_magic("brute", f"--model {PRICED} {flag}", "Say hello\n")
    finally:
        InteractiveShell.clear_instance()
    assert ("--budget cost=" in str(refused.value)) == (flag == "--estimate")  # what to do instead of a price
    assert paid(server) == [] and server.counted == []
