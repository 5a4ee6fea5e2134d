"""map(escalate=[...]): a row whose reply fails its schema is asked again on the next model, in its own session,
within the run's confirm_above; through the real anthropic SDK against the fake."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel

import brute_nb
from brute_nb.errors import SettingsError
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider
from tests.map.conftest import MODEL, prompt_of

STRONG = "anthropic:claude-strong"
STRONGER = "anthropic:claude-stronger"


class Label(BaseModel):
    label: str
    length: int


def by_model(body: dict[str, Any]) -> str:
    """The weak model breaks the schema on rows saying BAD; the strong one on rows saying WORSE; the stronger
    one never."""
    word = prompt_of(body).split("\n")[0].split()[-1]
    model = body["model"]
    if (model == "claude-fake" and word in ("BAD", "WORSE")) or (model == "claude-strong" and word == "WORSE"):
        return '{"label": "x"}'
    return f'{{"label": "{word}", "length": {len(word)}}}'


@pytest.fixture
def models(server: FakeProvider) -> Iterator[FakeProvider]:
    server.responder = by_model
    yield server
    from tests.map.conftest import respond

    server.responder = respond


def asked(fake: FakeProvider) -> list[tuple[str, str]]:
    return [(r["json"]["model"], prompt_of(r["json"]).split("\n")[0]) for r in fake.requests]


def test_a_row_that_breaks_the_schema_is_answered_by_the_next_model(models: FakeProvider, notebook: Path) -> None:
    df = pd.DataFrame({"word": ["fine", "BAD", "good"]}, index=["a", "b", "c"])
    out = brute_nb.map("Label {word}", df, model=MODEL, schema=Label, escalate=[STRONG], concurrency=1,
                       progress=False)
    assert list(out.columns[:3]) == ["label", "length", "model"]
    assert out["error"].isna().all()
    assert list(out["model"]) == [MODEL, STRONG, MODEL]
    assert out.loc["b", "label"] == "BAD" and out.loc["b", "length"] == 3
    assert [m for m, _ in asked(models)].count("claude-strong") == 1  # only the failing row was escalated
    assert out.loc["b", "input_tokens"] > out.loc["a", "input_tokens"]  # both attempts are counted
    escalated = read_session(out.loc["b", "session"])
    assert [m.role for m in escalated] == ["user", "assistant"] and escalated[-1].meta["model"] == "claude-strong"
    before = len(models.requests)
    again = brute_nb.map("Label {word}", df, model=MODEL, schema=Label, escalate=[STRONG], progress=False)
    assert again["cached"].all() and list(again["model"]) == list(out["model"])
    assert len(models.requests) == before  # a re-run pays for nothing


def test_each_model_is_tried_in_turn_and_a_row_none_could_answer_says_so(models: FakeProvider,
                                                                         notebook: Path) -> None:
    df = pd.DataFrame({"word": ["WORSE", "BAD"]})
    out = brute_nb.map("Label {word}", df, model=MODEL, schema=Label, escalate=[STRONG, STRONGER], concurrency=1,
                       progress=False)
    assert list(out["model"]) == [STRONGER, STRONG]
    assert [m for m, p in asked(models) if p.endswith("WORSE")] == ["claude-fake", "claude-strong",
                                                                      "claude-stronger"]
    failed = brute_nb.map("Label {word}", pd.DataFrame({"word": ["WORSE"]}), model=MODEL, schema=Label,
                          escalate=[STRONG], name="one-step", progress=False)
    assert "does not match Label" in failed["error"].iloc[0]
    assert f"asked {MODEL}, {STRONG} in turn" in failed["error"].iloc[0]
    assert failed["model"].iloc[0] == STRONG


def test_no_escalation_once_the_run_reached_its_ceiling(models: FakeProvider, notebook: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import brute_nb.notebook.approvals as approvals

    monkeypatch.setattr(approvals, "stdin_available", lambda: True)
    monkeypatch.setattr(builtins, "input", lambda question: "y")  # go ahead above the ceiling
    priced = "anthropic:claude-haiku-4-5"
    df = pd.DataFrame({"word": ["BAD", "fine"]})  # the failing row's own first attempt already reached it
    models.responder = lambda body: by_model({**body, "model": "claude-fake" if body["model"] == priced[10:]
                                              else body["model"]})
    out = brute_nb.map("Label {word}", df, model=priced, schema=Label, escalate=[STRONG], concurrency=1,
                       confirm_above=1e-9, progress=False)
    assert "not escalated to anthropic:claude-strong: the run has spent" in out["error"].iloc[0]
    assert all(m != "claude-strong" for m, _ in asked(models))


def test_escalate_needs_a_schema_and_no_batch(server: FakeProvider, notebook: Path) -> None:
    df = pd.DataFrame({"word": ["x"]})
    with pytest.raises(SettingsError, match="pass schema= too"):
        brute_nb.map("Label {word}", df, model=MODEL, escalate=[STRONG], progress=False)
    with pytest.raises(SettingsError, match="drop batch=True"):
        brute_nb.map("Label {word}", df, model=MODEL, schema=Label, escalate=[STRONG], batch=True, progress=False)
    assert server.requests == []
