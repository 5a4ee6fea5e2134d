"""confirm_above: a map that may cost more than the ceiling asks first (input() where someone can answer) and is
refused where no one can; through the real anthropic SDK against the fake."""

from __future__ import annotations

import builtins
from pathlib import Path

import pandas as pd
import pytest

import brute_nb
from brute_nb.errors import SettingsError
from brute_nb.map.confirm import CostNotConfirmedError
from brute_nb.notebook import approvals
from brute_nb.testing import FakeProvider
from tests.map.conftest import paid

PRICED = "anthropic:claude-haiku-4-5"


def reviews(n: int) -> pd.DataFrame:
    return pd.DataFrame({"review": [f"review {i}" for i in range(n)]})


def test_headless_above_the_ceiling_is_refused_and_nothing_is_sent(server: FakeProvider, notebook: Path) -> None:
    with pytest.raises(CostNotConfirmedError) as raised:
        brute_nb.map("Say {review}", reviews(3), model=PRICED, confirm_above=0.01, progress=False)
    message = str(raised.value)
    assert "may cost up to $" in message and "confirm_above=$0.0100" in message and "no stdin" in message
    assert "3 requests to send" in message  # the estimate itself is in the error
    assert paid(server) == [] and len(server.counted) == 3


def test_within_the_ceiling_it_runs_without_asking(server: FakeProvider, notebook: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(approvals, "stdin_available", lambda: True)  # a person could answer, and is not asked
    monkeypatch.setattr(builtins, "input", lambda question: pytest.fail("asked"))
    out = brute_nb.map("Say {review}", reviews(2), model=PRICED, confirm_above=5, progress=False)
    assert out["error"].isna().all() and len(paid(server)) == 2


def test_a_person_answers_in_the_cell(server: FakeProvider, notebook: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    asked: list[str] = []
    monkeypatch.setattr(approvals, "stdin_available", lambda: True)
    monkeypatch.setattr(builtins, "input", lambda question: asked.append(question) or "n")
    with pytest.raises(CostNotConfirmedError, match="you answered 'n'"):
        brute_nb.map("Say {review}", reviews(2), model=PRICED, confirm_above=0.001, progress=False)
    assert paid(server) == [] and "Send 2 requests?" in asked[0]
    assert "map estimate for anthropic:claude-haiku-4-5" in capsys.readouterr().out
    monkeypatch.setattr(builtins, "input", lambda question: "yes")
    out = brute_nb.map("Say {review}", reviews(2), model=PRICED, confirm_above=0.001, progress=False)
    assert out["error"].isna().all() and len(paid(server)) == 2


def test_the_kernel_setting_is_the_default_and_a_cached_rerun_never_asks(server: FakeProvider,
                                                                        notebook: Path) -> None:
    brute_nb.map("Say {review}", reviews(2), model=PRICED, progress=False)
    brute_nb.configure(confirm_above="$0.000001")  # below even the one row still to send
    again = brute_nb.map("Say {review}", reviews(2), model=PRICED, progress=False)  # all cached: nothing to ask
    assert again["cached"].all()
    with pytest.raises(CostNotConfirmedError):
        brute_nb.map("Say {review}", reviews(3), model=PRICED, progress=False)
    brute_nb.configure(confirm_above="none")
    assert brute_nb.map("Say {review}", reviews(3), model=PRICED, progress=False)["error"].isna().all()


def test_a_cost_that_cannot_be_bounded_counts_as_above(server: FakeProvider, notebook: Path) -> None:
    with pytest.raises(CostNotConfirmedError, match="the price table does not know the model"):
        brute_nb.map("Say {review}", reviews(2), model="anthropic:claude-fake", confirm_above=100, progress=False)
    assert paid(server) == []


def test_a_bad_ceiling_is_a_settings_error(server: FakeProvider, notebook: Path) -> None:
    with pytest.raises(SettingsError, match="cost in US dollars"):
        brute_nb.map("Say {review}", reviews(2), model=PRICED, confirm_above="lots", progress=False)
    with pytest.raises(SettingsError, match="cost in US dollars"):
        brute_nb.configure(confirm_above=-1)


def test_config_shows_the_ceiling_once_set(server: FakeProvider, notebook: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell()
    try:
        shell.extension_manager.load_extension("brute_nb")
        shell.run_line_magic("brute", "config")
        assert "confirm_above" not in capsys.readouterr().out
        shell.run_line_magic("brute", "config confirm_above=0.25")
        assert "confirm_above:  $0.2500" in capsys.readouterr().out
    finally:
        InteractiveShell.clear_instance()


def test_rows_answered_with_short_replies_never_lower_the_ceiling(server: FakeProvider, notebook: Path) -> None:
    from brute_nb.providers.anthropic import DEFAULT_MAX_TOKENS

    df = reviews(20)
    brute_nb.map("Say {review}", df.head(3), model=PRICED, progress=False)  # short replies: a few tokens each
    est = brute_nb.estimate("Say {review}", df, model=PRICED)
    assert est.output_tokens[1] == DEFAULT_MAX_TOKENS * 17  # the ceiling is max_tokens a row, whatever was answered
    assert est.likely is not None and est.high is not None and est.likely[1] < 0.5 < est.high
    assert "3 rows of this run already answered" in repr(est)
    with pytest.raises(CostNotConfirmedError, match="may cost up to"):
        brute_nb.map("Say {review}", df, model=PRICED, confirm_above=0.5, progress=False)
    assert len(paid(server)) == 3  # only the three rows answered first


def test_without_max_tokens_the_models_context_window_bounds_a_reply(server: FakeProvider, notebook: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.cost import model_info
    from brute_nb.providers.openai import OpenAIChat

    monkeypatch.setattr(approvals, "stdin_available", lambda: True)  # a person could answer, and is not asked
    monkeypatch.setattr(builtins, "input", lambda question: pytest.fail("asked"))
    provider = OpenAIChat("gpt-4.1", base_url=server.openai_base_url, api_key=server.api_key, max_retries=0)
    window = (model_info({"provider": "openai", "model": "gpt-4.1"}) or {})["context_window"]
    est = brute_nb.estimate("Say {review}", reviews(3), model=provider)
    assert est.output_tokens[1] == 3 * window - est.input_tokens and "context window" in est.output_basis
    assert est.high is not None and est.high < 100
    out = brute_nb.map("Say {review}", reviews(3), model=provider, confirm_above=100, progress=False)
    assert out["error"].isna().all() and len(paid(server)) == 3
