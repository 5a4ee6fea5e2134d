"""brute_nb's errors are one red line and a hint, the traceback one step away (issue 15, item 11), and a key set
after a 401 is used by the next cell (item 12): in a real kernel, through the real anthropic SDK against the fake
server, which answers a wrong key with the API's real 401 body. Also the ``repaired`` notice and the widget."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import html_of, kernel, ok, run, shown
from notebook_helpers import WAIT

from brute_nb import Message, ToolCall
from brute_nb.event_loop import run_sync
from brute_nb.notebook.front.widget import ChatWidget
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.views.display import CellView
from brute_nb.testing import API_KEY, FakeProvider

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def errors(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o["content"] for o in outputs if o["msg_type"] == "error"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, FakeProvider]]:
    folder = tmp_path_factory.mktemp("errors")
    with FakeProvider() as fake:
        env = {"ANTHROPIC_API_KEY": "sk-ant-wrong", "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "",
               "OLLAMA_HOST": "", "BRUTE_MODEL": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
        with kernel(folder, **env) as (_, kc):
            ok(kc, "%load_ext brute_nb")
            yield kc, fake


@pytest.mark.kernel
def test_a_provider_error_is_one_line_and_a_hint(bench: tuple[Any, FakeProvider]) -> None:
    kc, fake = bench
    fake.add("never sent")
    reply, outputs = run(kc, "%%brute\nhello")
    assert reply["status"] == "error" and reply["ename"] == "ProviderError"  # the cell still fails: Run all stops
    [error] = errors(outputs)
    lines = [ANSI.sub("", line) for line in error["traceback"]]
    assert len(lines) == 2, lines
    assert lines[0].startswith("ProviderError: ") and "401" in lines[0]
    assert "%tb" in lines[1] and "debug=true" in lines[1]
    assert "File " not in "".join(error["traceback"])
    # %tb shows the whole traceback, through brute_nb's own frames
    _, tb_outputs = run(kc, "%tb")
    full = ANSI.sub("", "".join(line for e in errors(tb_outputs) for line in e["traceback"]))
    assert "brute_nb" in full and "Traceback" in full and len(full.splitlines()) > 10


@pytest.mark.kernel
def test_debug_shows_the_full_traceback_in_place(bench: tuple[Any, FakeProvider]) -> None:
    kc, _ = bench
    ok(kc, "%brute config debug=true")
    _, outputs = run(kc, "%%brute\nhello")
    assert len(ANSI.sub("", "\n".join(errors(outputs)[0]["traceback"])).splitlines()) > 10
    ok(kc, "%brute config debug=false")
    _, outputs = run(kc, "%%brute\nhello")
    assert len(errors(outputs)[0]["traceback"]) == 2


@pytest.mark.kernel
def test_other_errors_keep_their_traceback_and_unload_restores(bench: tuple[Any, FakeProvider]) -> None:
    kc, _ = bench
    _, outputs = run(kc, "def f():\n    raise ValueError('mine')\nf()")
    assert "raise ValueError" in ANSI.sub("", "".join(errors(outputs)[0]["traceback"]))
    ok(kc, "%unload_ext brute_nb")
    _, outputs = run(kc, "from brute_nb.errors import BruteError\ndef g():\n    raise BruteError('x')\ng()")
    assert "raise BruteError" in ANSI.sub("", "".join(errors(outputs)[0]["traceback"]))
    ok(kc, "%load_ext brute_nb")


@pytest.mark.kernel
def test_a_key_set_after_the_401_is_used_by_the_next_cell(bench: tuple[Any, FakeProvider]) -> None:
    kc, fake = bench
    ok(kc, f"import os\nos.environ['ANTHROPIC_API_KEY'] = {API_KEY!r}")
    fake.script.clear()
    fake.add("Hello with the right key")
    outputs = ok(kc, "%%brute\nhello")
    assert "Hello with the right key" in html_of(outputs)
    assert not errors(outputs) and shown(outputs)


BROKEN = [
    Message("user", "read a"),
    Message("assistant", "", tool_calls=[ToolCall("c1", "read", {"file_path": "a"})]),
    Message("assistant", "done"),
    Message("tool", "left over", tool_call_id="gone"),
]


def test_a_repaired_request_is_said_once_in_the_cell(nb: NotebookAgent, fake: FakeProvider) -> None:
    nb.session_path.write_text("".join(m.to_json() + "\n" for m in BROKEN))
    fake.add("first", "second")
    notices = []
    for prompt in ("again", "and again"):
        published: list[dict[str, Any]] = []
        view = CellView(publish=lambda bundle, *a, _to=published, **k: _to.append(dict(bundle)),
                        update=lambda *a, **k: None)
        view.attach(nb.agent)
        env = run_sync(lambda p=prompt: nb.aask(p))  # type: ignore[misc]
        view.detach(nb.agent)
        view.finish(env=env)
        notices.append([b["text/plain"] for b in published if "session file is unchanged" in b["text/plain"]])
    assert len(notices[0]) == 1 and "left out 1 tool result" in notices[0][0]
    assert notices[1] == []


def test_the_widget_shows_one_line_and_folds_the_traceback(tmp_path: Path, fake: FakeProvider) -> None:
    from brute_nb.providers.anthropic import AnthropicMessages

    nb = NotebookAgent("chat", tmp_path / "chat.jsonl")
    nb.provider = AnthropicMessages("claude-fake", base_url=fake.base_url, api_key="sk-ant-wrong<b>", max_retries=0)
    chat = ChatWidget(nb)
    chat.send("hi")
    assert chat.wait_idle(WAIT)
    html = chat.transcript_html
    notice = re.search(r'<div class="brute-error"[^>]*>([^<]*)</div>', html)
    assert notice is not None and notice.group(1).startswith("ProviderError: ") and "401" in notice.group(1)
    folded = re.search(r'<details class="brute-traceback"[^>]*>(.*?)</details>', html, re.S)
    assert folded is not None and "open" not in html[folded.start():folded.start() + 40]
    assert "Traceback" in folded.group(1) and "<b>" not in folded.group(1)


STOP_CELL = """
def wait_for_the_turn():
    raise KeyboardInterrupt

try:
    wait_for_the_turn()
except KeyboardInterrupt as stop:
    from brute_nb.notebook.views.short_errors import interrupted
    interrupted(stop)
    raise
"""


def test_a_stopped_turns_interrupt_is_one_line_and_any_other_keeps_its_traceback(
        shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 28 §3: under a stopped turn's one-line notice the interrupt is one line and the hint (no frames of the
    wait it landed in), still a KeyboardInterrupt; ``%tb`` shows it in full, and a user's own interrupt is as
    IPython shows it."""
    result = shell.run_cell(STOP_CELL)
    assert isinstance(result.error_in_exec, KeyboardInterrupt)  # the cell fails as interrupted: Run all stops
    shown = ANSI.sub("", capsys.readouterr().out).strip().splitlines()
    assert shown == ["KeyboardInterrupt", "the full traceback: %tb (or %brute config debug=true to show it every time)"]
    shell.run_line_magic("tb", "")
    assert "wait_for_the_turn" in ANSI.sub("", capsys.readouterr().out)

    result = shell.run_cell("def mine():\n    raise KeyboardInterrupt\nmine()")
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    assert "mine()" in ANSI.sub("", capsys.readouterr().out)

    shell.run_line_magic("brute", "config debug=true")
    capsys.readouterr()
    shell.run_cell(STOP_CELL)
    assert "wait_for_the_turn" in ANSI.sub("", capsys.readouterr().out)
