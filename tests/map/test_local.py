"""brute_nb.map on the in-process engine, against the loopback fake provider through the real anthropic SDK."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pandas as pd
import pytest
from pydantic import BaseModel

import brute_nb
from brute_nb.errors import SettingsError
from brute_nb.map.limiter import AdaptiveLimiter
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, slow
from brute_nb.testing.fake_server import RateLimit
from tests.loopback import open_to
from tests.map.conftest import MODEL, paid, prompt_of, respond


def frame(n: int, prefix: str = "r") -> pd.DataFrame:
    """Rows whose index is not their position, so alignment is tested, not assumed."""
    return pd.DataFrame({"review": [f"{prefix}{i}" for i in range(n)]}, index=[100 - 3 * i for i in range(n)])


def test_results_are_aligned_to_the_index_and_each_row_is_a_session(server: FakeProvider, notebook: Path) -> None:
    df = frame(12)
    out = brute_nb.map("Classify: {review}", df, model=MODEL, concurrency=4, progress=False)
    assert list(out.index) == list(df.index)
    assert list(out.columns) == ["reply", "error", "input_tokens", "output_tokens", "cost", "session", "cached"]
    assert list(out["reply"]) == [f"echo: Classify: r{i}" for i in range(12)]
    assert out["error"].isna().all() and (out["input_tokens"] > 0).all() and not out["cached"].any()
    assert sorted(paid(server)) == sorted(f"Classify: r{i}" for i in range(12))
    session = Path(out["session"].iloc[3])
    assert session.parent.parent.parent == notebook.with_suffix(".brute") / "map"
    log = brute_nb.frame(read_session(session))
    assert list(log["content"]) == ["Classify: r3", "echo: Classify: r3"]


def test_an_unchanged_rerun_costs_nothing_and_a_new_column_value_runs_once(server: FakeProvider,
                                                                            notebook: Path) -> None:
    df = frame(6).assign(other=range(6))
    first = brute_nb.map("Say {review}", df, model=MODEL, progress=False)
    again = brute_nb.map("Say {review}", df.assign(other=-1), model=MODEL, progress=False)  # unread column
    assert len(paid(server)) == 6 and again["cached"].all()
    assert list(again["reply"]) == list(first["reply"])
    changed = df.copy()
    changed.loc[changed.index[2], "review"] = "new"
    third = brute_nb.map("Say {review}", changed, model=MODEL, progress=False)
    assert paid(server)[6:] == ["Say new"] and third["cached"].sum() == 5


def test_equal_rows_are_asked_once(server: FakeProvider, notebook: Path) -> None:
    df = pd.DataFrame({"review": ["same", "same", "other", "same"]})
    out = brute_nb.map("Say {review}", df, model=MODEL, progress=False)
    assert sorted(paid(server)) == ["Say other", "Say same"]
    assert list(out["reply"]) == ["echo: Say same", "echo: Say same", "echo: Say other", "echo: Say same"]


def test_a_failing_row_gets_its_error_and_the_run_goes_on(server: FakeProvider, notebook: Path) -> None:
    df = pd.DataFrame({"review": ["good", "FAIL bad", "fine"]}, index=["a", "b", "c"])
    out = brute_nb.map("Say {review}", df, model=MODEL, progress=False)
    assert pd.isna(out.loc["b", "reply"])
    assert "HTTP 400" in out.loc["b", "error"] and "this row is refused: bad" in out.loc["b", "error"]
    assert out.loc[["a", "c"], "error"].isna().all()
    again = brute_nb.map("Say {review}", df, model=MODEL, progress=False)
    assert paid(server).count("Say FAIL bad") == 2  # a failed row is not cached: it runs again
    assert list(again["cached"]) == [True, False, True]


def test_a_run_where_every_row_failed_shows_as_failed(server: FakeProvider, notebook: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 item 6: not a green 100% bar with a small ``failed=3``: a red bar, one line naming the commonest
    error, and no ``$0.0000`` where the frame says the cost is unknown. The terminal's bar: ``tqdm.auto`` chose
    its class when first imported, which an earlier test may have done beside an IPython shell."""
    import tqdm.auto
    import tqdm.std

    monkeypatch.setattr(tqdm.auto, "tqdm", tqdm.std.tqdm)
    df = pd.DataFrame({"review": ["FAIL x", "FAIL x", "FAIL y"]})
    out = brute_nb.map("Say {review}", df, model=MODEL, progress=True, concurrency=1)
    shown = capsys.readouterr()
    assert out["error"].notna().all() and out["cost"].isna().all()
    assert "all 3 rows failed; the commonest error (2x): " in shown.out and "this row is refused: x" in shown.out
    assert "\x1b[38;2;207;34;46m" in shown.err  # the bar is red
    assert "$0.0000" not in shown.err and "cost=" not in shown.err


def test_progress_colours_failures_and_sums_only_priced_rows() -> None:
    from brute_nb.map.progress import ALL_FAILED, SOME_FAILED, Progress

    bar = Progress(4, 0, enabled=True, name="t")
    bar.update({"error": "ProviderError: HTTP 500\ntrace"})
    assert bar._bar.colour == ALL_FAILED and bar.cost is None
    bar.update({"reply": "ok", "cost": 0.00002})
    assert bar._bar.colour == SOME_FAILED and bar.cost == 0.00002
    assert bar.summary() == ("1 of 2 rows failed; the commonest error (1x): ProviderError: HTTP 500. The frame's "
                             "error column has each row's; failed rows run again on the next call")
    bar.close()
    assert Progress(1, 0, enabled=False, name="t").summary() is None


def test_a_rows_tokens_count_what_the_price_and_a_budget_count() -> None:
    """Issue 26 item 4: map's token columns and its progress bar read ``Usage``, so for Anthropic the cache reads and
    writes it reports apart from ``input_tokens`` are counted, as the row's cost counts them."""
    from brute_nb.map.progress import Progress
    from brute_nb.map.row import _summarize

    meta = {"provider": "anthropic", "model": "claude-sonnet-4-20250514", "input_tokens": 3, "output_tokens": 100,
            "cached_tokens": 9_000, "cache_write_tokens": 400}
    reply = brute_nb.Message("assistant", "a", meta=meta)
    record: dict[str, Any] = {"error": None, "reply": None, "input_tokens": 0, "output_tokens": 0, "cost": None}
    _summarize(record, [brute_nb.Message("user", "q"), reply])
    assert (record["input_tokens"], record["output_tokens"]) == (9_403, 100)
    assert record["cost"] == reply.cost is not None
    bar = Progress(1, 0, enabled=False, name="t")
    bar.update(record)
    assert bar.tokens == 9_503 == reply.usage.tokens  # type: ignore[union-attr]


def test_a_429_storm_slows_the_run_down_and_no_row_fails(server: FakeProvider, notebook: Path) -> None:
    server.rate_limit = RateLimit(300)  # 5 requests a second, a burst of 5
    out = brute_nb.map("Say {review}", frame(20), model=MODEL, concurrency=8, progress=False)
    assert out["error"].isna().all()
    limited = [r for r in server.requests if r.get("limited")]
    assert limited, "the storm never happened: the rate limit was not reached"
    assert len(paid(server)) == 20


@pytest.mark.anyio
async def test_the_limiter_halves_once_a_round_and_climbs_back() -> None:
    limiter = AdaptiveLimiter(8)
    async with limiter.slot() as a, limiter.slot() as b:
        limiter.throttled(a, 0.0)
        limiter.throttled(b, 0.0)  # started before the cut: the same round, no second cut
    assert limiter.limit == 4
    for _ in range(40):
        limiter.succeeded()
    assert limiter.limit == 8


def test_a_template_naming_a_missing_column_is_refused_before_any_row(server: FakeProvider,
                                                                      notebook: Path) -> None:
    with pytest.raises(SettingsError, match=r"revew.*columns: review") as info:
        brute_nb.map("Say {revew}", frame(2), model=MODEL, concurrency=0, tools="nope", progress=False)
    assert "concurrency" in str(info.value) and "nope" in str(info.value)
    assert server.requests == []


class Word(BaseModel):
    label: str
    length: int


def test_schema_fields_become_columns_and_a_bad_reply_is_the_rows_error(server: FakeProvider,
                                                                       notebook: Path) -> None:
    df = pd.DataFrame({"word": ["JSON apple", "JSON BAD", "JSON fig"]})
    out = brute_nb.map("{word}", df, model=MODEL, schema=Word, progress=False)
    assert list(out.columns[:2]) == ["label", "length"]
    assert list(out["label"].fillna("-")) == ["apple", "-", "fig"] and out.loc[0, "length"] == 5
    assert "does not match Word" in out.loc[1, "error"] and "length" in out.loc[1, "error"]
    sent = [r["json"] for r in server.requests]
    # Anthropic has structured output: the schema goes as its own option, and the prompt stays the user's.
    assert all(b["output_config"]["format"]["schema"]["properties"].keys() == {"label", "length"} for b in sent)
    assert sorted(paid(server)) == ["JSON BAD", "JSON apple", "JSON fig"]


def test_a_provider_without_structured_output_is_asked_in_the_prompt(notebook: Path) -> None:
    from brute_nb.map.api import plan, settle
    from brute_nb.map.context import MapContext
    from brute_nb.map.row import RowContext, run_row

    class Plain:  # a provider with no structured-output option (an llm plugin, a plain callable)
        prompts: ClassVar[list[str]] = []

        async def __call__(self, env: dict[str, Any]) -> None:
            assert "schema" not in env
            self.prompts.append(str(env["messages"][-1].content))
            env["messages"].assistant('{"label": "kiwi", "length": 4}')

    df = pd.DataFrame({"word": ["kiwi"]})
    spec, _ = settle("{word}", df, schema=Word, tools="none", model=MODEL, system=None, name="plain", root=None,
                     max_iterations=3, cache=False, backend="local", concurrency=1,
                     context=MapContext(sessions=notebook.with_suffix(".brute")))
    _, jobs = plan(spec, df)
    record = anyio.run(run_row, RowContext.build(spec, 1, provider=Plain()), jobs[0])
    assert record["error"] is None and record["fields"] == {"label": "kiwi", "length": 4}
    assert "JSON schema" in Plain.prompts[0]


def test_writing_tools_run_in_a_scratch_copy_per_row(server: FakeProvider, notebook: Path, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "keep.txt").write_text("mine")
    df = pd.DataFrame({"name": ["WRITE one", "WRITE two"]})
    out = brute_nb.map("Do {name}", df, model=MODEL, tools="read,write", root=root, progress=False)
    assert list(out["reply"]) == ["wrote it", "wrote it"] and out["error"].isna().all()
    assert sorted(p.name for p in root.iterdir()) == ["keep.txt"]  # the user's folder is untouched
    for i, word in enumerate(["one", "two"]):
        session = Path(out.loc[i, "session"])
        scratch = session.parent.parent / "scratch" / session.stem
        assert (scratch / "out.txt").read_text() == word and (scratch / "keep.txt").read_text() == "mine"
        assert [m.role.value for m in read_session(session)] == ["user", "assistant", "tool", "assistant"]


def test_a_lost_cache_is_rebuilt_from_the_row_sessions_without_a_request(server: FakeProvider,
                                                                         notebook: Path) -> None:
    df = frame(5)
    brute_nb.map("Say {review}", df, model=MODEL, progress=False, name="lost")
    (notebook.with_suffix(".brute") / "map" / "lost.jsonl").unlink()  # the kernel died before the cache line
    again = brute_nb.map("Say {review}", df, model=MODEL, progress=False, name="lost")
    assert len(paid(server)) == 5
    assert list(again["reply"]) == [f"echo: Say r{i}" for i in range(5)]


def test_the_accessor_and_the_magic_run_the_same_map(server: FakeProvider, notebook: Path) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    df = frame(3)
    out = df.brute.map("Say {review}", model=MODEL, progress=False)
    assert list(out["reply"]) == [f"echo: Say r{i}" for i in range(3)]
    shell = InteractiveShell()
    try:
        shell.extension_manager.load_extension("brute_nb")
        shell.user_ns["df"] = df
        shell.run_cell_magic("brute", f"--over df --model {MODEL}", "Say {review}\n")  # fills the cache
        result = shell.run_cell_magic("brute", f"--over df --model {MODEL} --concurrency 2", "Say {review}\n")
    finally:
        InteractiveShell.clear_instance()
    assert list(result["reply"]) == list(out["reply"]) and result["cached"].all()
    assert len(paid(server)) == 3


def test_an_interrupted_run_keeps_finished_rows_and_resumes_without_paying_twice(
        server: FakeProvider, notebook: Path, tmp_path: Path) -> None:
    arrived = threading.Event()

    def slow_on_r4(body: dict) -> object:
        if prompt_of(body) == "Say r4":
            arrived.set()
            return slow("still thinking about r4", 0.5)
        return respond(body)

    server.responder = slow_on_r4
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import signal
        # Ctrl-C as in a terminal: a suite started in the background (`cmd &`) passes SIGINT on ignored, and
        # Python then installs no KeyboardInterrupt handler, so the run would finish unbothered
        signal.signal(signal.SIGINT, signal.default_int_handler)
        import pandas as pd, brute_nb
        df = pd.DataFrame({{"review": [f"r{{i}}" for i in range(8)]}})
        brute_nb.map("Say {{review}}", df, model={MODEL!r}, concurrency=1, progress=False)
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        child = subprocess.Popen([sys.executable, str(script)], env=env, stderr=subprocess.PIPE, text=True)
        assert arrived.wait(60), "the run never reached row 4"
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        server.responder = respond
    assert child.returncode != 0 and "KeyboardInterrupt" in err
    assert paid(server) == [f"Say r{i}" for i in range(5)]
    df = pd.DataFrame({"review": [f"r{i}" for i in range(8)]})
    out = brute_nb.map("Say {review}", df, model=MODEL, concurrency=1, progress=False)
    assert list(out["cached"]) == [True] * 4 + [False] * 4
    assert list(out["reply"]) == [f"echo: Say r{i}" for i in range(8)]
    asked = paid(server)
    assert all(asked.count(f"Say r{i}") == 1 for i in range(8) if i != 4)
    assert asked.count("Say r4") == 2  # only the row cut off mid-reply is asked again


def test_a_map_frame_shows_replies_as_text_and_session_paths_by_their_file_name(server: FakeProvider,
                                                                                  notebook: Path) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from tests.ipython_shell import loaded_shell

    df = frame(2)
    out = brute_nb.map("Say {review}\nin two lines", df, model=MODEL, progress=False)
    assert out["reply"].str.contains("\n").all()  # the data keeps its line breaks
    with loaded_shell(notebook.parent) as ip:
        html = ip.display_formatter.format(out)[0]["text/html"]
    assert InteractiveShell.initialized() is False
    stem = Path(out["session"].iloc[0]).stem
    assert f">{stem[:8]}…</span>" in html  # the start of the (hash) file name that tells the rows apart
    assert f'title="{out["session"].iloc[0]}"' in html  # the whole path on hover
    assert "echo: Say r0\nin two lines" in html and "white-space:pre-wrap" in html


def test_a_run_leaves_no_connection_open(server: FakeProvider, notebook: Path) -> None:
    """A run builds its own provider (one SDK client for its rows): its kept-alive connections closed with the
    run, where they stayed open on the kernel's loop for the kernel's life, a pool more for every run."""
    from urllib.parse import urlsplit

    port = urlsplit(server.base_url).port
    assert port is not None
    before = open_to(port)
    brute_nb.map("Say {review}", frame(6, "socket"), model=MODEL, concurrency=3, progress=False)
    assert open_to(port) == before
    from brute_nb.map.confirm import CostNotConfirmedError

    with pytest.raises(CostNotConfirmedError):  # the fake's model has no price: priced over a connection, refused
        brute_nb.map("Say {review}", frame(4, "priced"), model=MODEL, progress=False, confirm_above=100)
    assert open_to(port) == before
    brute_nb.estimate("Say {review}", frame(4, "guess"), model=MODEL)
    assert open_to(port) == before
