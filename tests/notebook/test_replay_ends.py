"""A replayed notebook given a prompt it never recorded (issue 32 item 4): the cell fails with one line that says
the recording has no reply and how to reach a real model, with no footer above it and the diff one ``%tb`` away.
In a real kernel, replaying through the real anthropic SDK a cassette recorded here against the fake provider."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import kernel, ok, run

from brute_nb.event_loop import run_sync
from brute_nb.notebook.session import NotebookAgent, final_text
from brute_nb.notebook.settings import Settings
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.testing import FakeProvider

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SYSTEM = "You are terse."
PROMPT = "What is two and two?"


def record(folder: Path) -> Path:
    cassette = folder / "demo.jsonl"
    with FakeProvider(["Four."]) as fake:
        nb = NotebookAgent("default", folder / "rec" / "default.jsonl", notebook=folder / "rec.ipynb",
                           settings=Settings(tools="none", system=SYSTEM))
        nb.provider = AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key,
                                        max_retries=0, record=str(cassette))
        assert final_text(run_sync(lambda: nb.aask(PROMPT))["messages"]) == "Four."
    return cassette


def error_lines(outputs: list[dict[str, Any]]) -> list[str]:
    [error] = [o["content"] for o in outputs if o["msg_type"] == "error"]
    return [ANSI.sub("", line) for line in error["traceback"]]


def shown_by_tb(kc: Any) -> str:
    _, outputs = run(kc, "%tb")
    errors = [o["content"]["traceback"] for o in outputs if o["msg_type"] == "error"]
    return "".join(ANSI.sub("", line) for lines in errors for line in lines)


@pytest.mark.kernel
def test_a_prompt_past_the_recording_says_how_to_go_live(tmp_path: Path) -> None:
    cassette = record(tmp_path)
    env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "BRUTE_MODEL": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
    with kernel(tmp_path, **env) as (_, kc):
        ok(kc, "%load_ext brute_nb")
        ok(kc, f"import brute_nb; brute_nb.configure(replay={str(cassette)!r}, tools='none', system={SYSTEM!r})")
        ok(kc, f"%%brute\n{PROMPT}")

        reply, outputs = run(kc, "%%brute\nAnd three and three?")  # the user's own prompt, after the recording
        assert reply["status"] == "error" and reply["ename"] == "CassetteMismatchError"  # Run All stops here
        lines = error_lines(outputs)
        assert len(lines) == 2 and lines[0].startswith("this notebook replays a recording; your prompt is not in it")
        assert "%brute live" in lines[0] and "ends after 1 request" in lines[0]
        assert "CassetteMismatchError" not in lines[0] and str(tmp_path) not in lines[0]
        shown = [o for o in outputs if o["msg_type"] in ("display_data", "execute_result")]
        assert not any("brute-footer" in str(o["content"]["data"].get("text/html", "")) for o in shown)

        reply, outputs = run(kc, f"%%brute -s fresh --replay {cassette} --tools none --system '{SYSTEM}'\n"
                                     "What is two and three?")  # a changed prompt where one was recorded
        lines = error_lines(outputs)
        assert len(lines) == 2 and "request 1 differs from the recording" in lines[0] and "%brute live" in lines[0]
        full = shown_by_tb(kc)
        assert "two and three" in full and "two and two" in full  # the diff, one step away

        with FakeProvider(["Six."]) as live:  # the one command, a key, and the same kernel goes live
            ok(kc, f"import os; os.environ.update(ANTHROPIC_API_KEY={live.api_key!r}, "
                   f"ANTHROPIC_BASE_URL={live.base_url!r})")
            _, outputs = run(kc, "%brute live")
            said = "".join(str(o["content"].get("text", "")) for o in outputs)
            assert "live" in said and "anthropic:" in said
            reply, outputs = run(kc, "%%brute\nAnd three and three?")
            assert reply["status"] == "ok" and live.received == 1
        assert "Six." in str(outputs)
        _, outputs = run(kc, "import os; print(os.environ.get('BRUTE_LIVE'))")
        assert "1" in str(outputs)  # a demo's setup cell, run again, stays live


@pytest.mark.kernel
def test_tb_shows_the_diff_after_a_map_row_and_brute_fix(tmp_path: Path) -> None:
    """The message says "%tb shows how"; a map row (its error column) and ``%brute fix`` (whose errors became a
    ``UsageError`` of one line) left ``%tb`` without the diff the message promises."""
    cassette = record(tmp_path)
    env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "BRUTE_MODEL": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
    with kernel(tmp_path, **env) as (_, kc):
        ok(kc, "%load_ext brute_nb")
        ok(kc, f"import brute_nb; brute_nb.configure(replay={str(cassette)!r}, tools='none', system={SYSTEM!r})")

        ok(kc, "import pandas as pd; rows = brute_nb.map('Say {x}', pd.DataFrame({'x': ['hippopotamus']}))")
        _, outputs = run(kc, "print(rows['error'][0])")
        assert "differs from the recording" in str(outputs) and "%tb" in str(outputs)
        full = shown_by_tb(kc)
        assert "hippopotamus" in full and "two and two" in full  # the row's diff, as the error column promises

        run(kc, "undefined_name_for_fix")
        reply, outputs = run(kc, "%brute fix")
        assert reply["status"] == "error"
        said = ANSI.sub("", str([o["content"] for o in outputs]))
        assert "request 1 differs from the recording" in said and "%brute live" in said
        full = shown_by_tb(kc)
        assert "undefined_name_for_fix" in full and "two and two" in full  # the fix prompt's diff
