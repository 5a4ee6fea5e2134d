"""Every ``%brute`` subcommand and ``%%brute`` option in one real kernel, against the strict fake provider.

One kernel for the module (tests run in file order and each works in its own session where it can), talking to
a ``FakeProvider`` in this process through the real ``anthropic`` SDK (``ANTHROPIC_BASE_URL``): every request
the kernel sends is checked against the API's rules, and nothing reaches the network.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import html_of, kernel, live_ops, ok, run, shown, text_of, value_of

from brute_nb.message import Message, unanswered_calls
from brute_nb.providers import DEFAULT_MODELS
from brute_nb.sessions.file import read_session
from brute_nb.testing import API_KEY, FakeProvider, call, reply, slow
from brute_nb.usage import Usage

pytestmark = pytest.mark.kernel

MODEL = DEFAULT_MODELS["anthropic"]  # auto()'s default for an ANTHROPIC_API_KEY
LOG_COLUMNS = ("turn", "role", "content", "tool_calls", "tool_call_id", "tool_names", "n_tool_calls", "chars",
               "model", "input_tokens", "output_tokens", "finish_reason", "created_at", "duration_ms")
TOOL_COLUMNS = ("turn", "call_id", "name", "arguments", "result", "is_error", "result_chars", "duration_ms")
SESSION_COLUMNS = ("name", "messages", "tool_calls", "last_modified", "size")


class Bench:
    def __init__(self, km: Any, kc: Any, fake: FakeProvider, folder: Path) -> None:
        self.km, self.kc, self.fake, self.folder = km, kc, fake, folder
        self.sessions = folder / "demo.brute"

    def lines(self, session: str) -> list[dict[str, Any]]:
        path = self.sessions / f"{session}.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def sent(self, index: int = -1) -> str:
        """What one request sent as its conversation (JSON text, for substring checks)."""
        return json.dumps(self.fake.requests[index]["json"]["messages"])


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    folder = tmp_path_factory.mktemp("magics")
    with FakeProvider() as fake:
        env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "",
               "OLLAMA_HOST": "", "BRUTE_MODEL": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
        with kernel(folder, **env) as (km, kc):
            ok(kc, "%load_ext brute_nb\nimport brute_nb")
            yield Bench(km, kc, fake, folder)


def header_cells(html: str) -> list[str]:
    import re

    return re.findall(r"<th>([^<]*)</th>", html)


def test_a_turn_fills_braces_and_its_outputs_name_the_session_lines(bench: Bench) -> None:
    (bench.folder / "notes.txt").write_text("remember the milk\n")
    bench.fake.add(reply("Reading.", call("read", {"file_path": "notes.txt"})), "The notes say: milk.")
    ok(bench.kc, "n = 42")
    outputs = ok(bench.kc, "%%brute -s main\nread notes.txt, then say {n}")
    assert "then say 42" in bench.sent(-2) and "remember the milk" in bench.sent(-1)

    lines = bench.lines("main")
    assert [m["role"] for m in lines] == ["user", "assistant", "tool", "assistant"]
    used = Usage.total(Message.from_dict(m) for m in lines)
    # The lines hold Usage's convention: each reply's input counts the cache reads and writes it reported.
    assert used is not None and used.input_tokens == sum(m["meta"]["input_tokens"] for m in lines[1::2])
    assert used.cache_read_tokens + used.cache_write_tokens > 0 and "cached_tokens" not in lines[1]["meta"]
    finals = [c for c in shown(outputs) if c["data"].get("text/plain")]  # all but the emptied live display
    assert len(finals) == 4  # the two texts, the tool block, the footer
    for content in finals:
        meta = content["metadata"]["brute"]
        assert meta["session"] == "main"
        assert meta["message_ids"] == [m["meta"]["id"] for m in lines]
        assert meta["model"] == MODEL
        assert meta["usage"]["input_tokens"] == used.input_tokens  # cache reads and writes included, as priced
        assert meta["usage"]["tool_calls"] == 1
    texts = [c["metadata"]["brute"] for c in finals if "message_id" in c["metadata"]["brute"]]
    assert [t["message_id"] for t in texts] == [lines[1]["meta"]["id"], lines[3]["meta"]["id"]]


def test_raw_leaves_braces_alone(bench: Bench) -> None:
    bench.fake.add("Braces kept.")
    ok(bench.kc, "%%brute --raw --quiet\nliteral {n}")
    assert "literal {n}" in bench.sent()


def test_log_tools_and_usage_are_tables(bench: Bench) -> None:
    log_html = html_of(ok(bench.kc, "%brute log"))
    assert "<table" in log_html and set(LOG_COLUMNS) <= set(header_cells(log_html))
    assert "remember the milk" in log_html and "Braces kept." in log_html

    tools_html = html_of(ok(bench.kc, "%brute tools"))
    assert "<table" in tools_html and set(TOOL_COLUMNS) <= set(header_cells(tools_html))
    assert "notes.txt" in tools_html

    usage_html = html_of(ok(bench.kc, "%brute usage"))
    assert {"input_tokens", "output_tokens", "model_calls"} <= set(header_cells(usage_html))
    usage = value_of(bench.kc, "brute_nb.current().usage.astype(int).to_dict('index')")
    lines = bench.lines("main")
    assert usage["total"]["model_calls"] == 3 and usage[1]["model_calls"] == 2 and usage[2]["model_calls"] == 1
    assert usage["total"]["output_tokens"] == sum(m["meta"]["output_tokens"] for m in lines if m["role"] != "user"
                                                  and m["role"] != "tool")


def test_use_switches_session_and_sessions_lists_them(bench: Bench) -> None:
    assert "session side (new)" in text_of(ok(bench.kc, "%brute use side"))
    bench.fake.add("Hello from the side.")
    ok(bench.kc, "%%brute --quiet\nhi, side")
    assert [m["content"] for m in bench.lines("side")] == ["hi, side", "Hello from the side."]
    assert "hi, side" in bench.sent() and "remember the milk" not in bench.sent()  # a session of its own

    html = html_of(ok(bench.kc, "%brute sessions"))
    assert set(SESSION_COLUMNS) <= set(header_cells(html))
    table = value_of(bench.kc, "get_ipython().run_line_magic('brute', 'sessions')"
                               ".set_index('name')[['messages', 'tool_calls']].to_dict('index')")
    assert table == {"main": {"messages": 6, "tool_calls": 1}, "side": {"messages": 2, "tool_calls": 0}}
    assert "nothing to undo" in text_of(ok(bench.kc, "%brute undo"))
    assert "session main (continuing)" in text_of(ok(bench.kc, "%brute use main"))


def test_undo_reverts_the_agents_file_changes(bench: Bench) -> None:
    target = bench.folder / "out.txt"
    target.write_text("old\n")
    bench.fake.add(reply("Writing.", call("write", {"file_path": "out.txt", "content": "new\n"}),
                         call("write", {"file_path": "made.txt", "content": "made\n"})), "Both written.")
    ok(bench.kc, "%%brute --quiet\nchange out.txt and make made.txt")
    assert target.read_text() == "new\n" and (bench.folder / "made.txt").read_text() == "made\n"
    assert "restored" in text_of(ok(bench.kc, "%brute undo out.txt"))
    assert target.read_text() == "old\n" and (bench.folder / "made.txt").exists()
    assert "deleted" in text_of(ok(bench.kc, "%brute undo"))  # the last change left: made.txt was new
    assert not (bench.folder / "made.txt").exists()
    for line, needle in (("undo never-touched.txt", "%brute undo with no path"), ("undo a b", "usage: %brute undo")):
        reply_, _ = run(bench.kc, f"%brute {line}")
        assert reply_["ename"] == "UsageError" and needle in reply_["evalue"]


def test_undo_and_why_cover_the_variables_the_python_tool_changed(bench: Bench) -> None:
    ok(bench.kc, "%brute use vars")
    ok(bench.kc, "counts = {'a': 1}")
    bench.fake.add(reply("Counting.", call("python", {"code": "counts['b'] = 2\ntotal = sum(counts.values())"})),
                   "The total is 3.")
    ok(bench.kc, "%%brute --quiet --tools +python --approve python=allow\nadd b and count them")
    assert value_of(bench.kc, "(counts, total)") == ({"a": 1, "b": 2}, 3)
    why = "".join(c["data"]["text/plain"] for c in shown(ok(bench.kc, "%brute why total")))
    assert why.startswith('total was last created by the agent: session vars, turn 1 ("add b and count them").')
    assert f"session line: {bench.sessions / 'vars.jsonl'}:2" in why and "total = sum(counts.values())" in why
    undo = text_of(ok(bench.kc, "%brute undo"))
    assert "counts: restored (changed in place by the agent)" in undo and "total: removed" in undo
    assert value_of(bench.kc, "(counts, 'total' in globals())") == ({"a": 1}, False)
    ok(bench.kc, "%brute use main")


def test_config_shows_where_the_notebook_path_came_from_and_sets_keys(bench: Bench) -> None:
    text = text_of(ok(bench.kc, "%brute config"))
    assert "demo.ipynb  (from BRUTE_NB_NOTEBOOK)" in text  # relative to the kernel's folder when inside it
    assert "session:        main" in text and "max_iterations: 50" in text
    ok(bench.kc, "%brute use cfg")
    text = text_of(ok(bench.kc, '%brute config max_iterations=7 notebook=demo.ipynb tools=read,fs_search '
                                'system="Be brief." approve=shell=deny,write=ask'))
    assert "max_iterations: 7" in text and "(from setting)" in text and "session:        cfg" in text
    assert "tools:          read,fs_search" in text and "system:         Be brief." in text
    assert "'shell': 'deny'" in text and "'write': 'ask'" in text
    for line, needle in (("colour=blue", "unknown setting 'colour'"), ("tools=read,nope", "unknown tool nope"),
                         ("system=be brief", "'brief' is not one"), ('system="be', "No closing quotation")):
        reply_, _ = run(bench.kc, f"%brute config {line}")
        assert reply_["ename"] == "UsageError" and needle in reply_["evalue"]
    ok(bench.kc, "%brute use main")


def test_help_and_the_cell_magics_usage(bench: Bench) -> None:
    text = text_of(ok(bench.kc, "%brute help"))
    for sub in ("log", "tools", "sessions", "use NAME", "reset", "undo [PATH]", "why NAME", "usage", "config",
                "help"):
        assert f"%brute {sub}" in text
    assert text_of(ok(bench.kc, "%brute")) == text
    reply_, _ = run(bench.kc, "%brute frobnicate")
    assert reply_["ename"] == "UsageError" and "%brute sessions" in reply_["evalue"]
    reply_, _ = run(bench.kc, "%%brute?")
    page = reply_["payload"][0]["data"]["text/plain"]
    for option in ("-s SESSION, --session SESSION", "--new", "-m MODEL, --model MODEL", "--tools TOOLS", "--raw",
                   "--quiet", "--max-iterations MAX_ITERATIONS", "--replay REPLAY"):
        assert option in page


def test_reset_and_new_keep_the_old_file_timestamped(bench: Bench) -> None:
    before = (bench.sessions / "main.jsonl").read_text()
    text = text_of(ok(bench.kc, "%brute reset"))
    backup = Path(text.rsplit("kept as ", 1)[1].strip())
    assert backup.parent == bench.sessions and backup.name.startswith("main.2") and backup.read_text() == before
    assert not (bench.sessions / "main.jsonl").exists()
    assert value_of(bench.kc, "len(brute_nb.current().df)") == 0

    bench.fake.add("Starting over.")
    ok(bench.kc, "%%brute --quiet\nstart again")
    assert "remember the milk" not in bench.sent()
    first_new = (bench.sessions / "main.jsonl").read_text()
    bench.fake.add("Once more.")
    ok(bench.kc, "%%brute --new --quiet\nonce more")
    assert "start again" not in bench.sent()
    assert [m["content"] for m in bench.lines("main")] == ["once more", "Once more."]
    backups = [p for p in bench.sessions.glob("main.2*.jsonl") if not p.name.endswith(".archive.jsonl")]
    assert sorted(p.read_text() for p in backups) == sorted([before, first_new])


def test_load_forks_a_session_from_an_edited_frame(bench: Bench) -> None:
    original = (bench.sessions / "main.jsonl").read_text()
    code = ("df = brute_nb.current().df.copy()\n"
            "df.loc[df.index[df.role == 'user'][0], 'content'] = 'an edited question'\n"
            "fork = brute_nb.current().load(df)\n"
            "print(fork.name, brute_nb.current().name)")
    assert text_of(ok(bench.kc, code)).split() == ["main-fork-1", "main-fork-1"]  # the fork is now current
    assert [m["content"] for m in bench.lines("main-fork-1")] == ["an edited question", "Once more."]
    bench.fake.add("Continuing the fork.")
    ok(bench.kc, "%%brute --quiet\ngo on")
    assert "an edited question" in bench.sent() and "once more" not in bench.sent()
    assert (bench.sessions / "main.jsonl").read_text() == original  # the original is untouched
    assert [m["content"] for m in bench.lines("main-fork-1")][2:] == ["go on", "Continuing the fork."]


def test_interrupt_mid_stream_keeps_a_valid_session_and_the_next_turn_works(bench: Bench) -> None:
    words = " ".join(f"word{i}" for i in range(40))  # ~45 stream events a second apart: most of a minute
    bench.fake.add(slow(reply(words, call("read", {"file_path": "notes.txt"})), delay=1))
    interrupted: list[tuple[str, float]] = []

    def interrupt_on_first_text(msg: dict[str, Any]) -> None:
        live = json.dumps(msg["content"].get("data", {}).get("content", {}))  # the live widget's appended text
        if not interrupted and msg["msg_type"] == "comm_msg" and "word0" in live:
            interrupted.append((live, time.monotonic()))
            bench.km.interrupt_kernel()

    reply_, outputs = run(bench.kc, "%%brute -s stream\ntalk slowly", on_output=interrupt_on_first_text)
    assert interrupted, "no streamed text was shown before the reply ended"
    assert "word39" not in interrupted[0][0]  # it really was mid-stream
    assert reply_["status"] == "error" and reply_["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - interrupted[0][1] < 10  # the stream was cut, not waited out
    assert "interrupted" in html_of(outputs)

    saved = read_session(bench.sessions / "stream.jsonl")
    assert [m.content for m in saved if m.role == "user"] == ["talk slowly"]
    assert not unanswered_calls(saved)
    notice = [c for c in shown(outputs) if "interrupted" in c["data"].get("text/html", "")]
    assert notice and notice[0]["metadata"]["brute"]["message_ids"] == [m.meta["id"] for m in saved]

    # Issue 28 §3: what streamed is kept as the assistant's reply, marked, with no call (the call never ran).
    assert [m.role for m in saved] == ["user", "assistant"]
    partial = saved[1]
    assert partial.content.startswith("word0") and "word39" not in partial.content
    assert partial.meta["interrupted"] is True and partial.finish_reason == "interrupted" and not partial.tool_calls
    assert any(c["data"].get("text/plain", "").startswith("word0") for c in shown(outputs))  # still on screen
    # One notice line; under it the interrupt is one line and the hint, no frames: neither brute_nb's nor those of
    # the wait it landed in (threading.py, the last frame, which __tracebackhide__ never hides).
    error = next(o["content"] for o in outputs if o["msg_type"] == "error")
    traceback = "\n".join(error["traceback"])
    assert len(error["traceback"]) == 2 and "%tb" in error["traceback"][1], traceback
    assert "brute_nb" not in traceback and "threading.py" not in traceback and "File " not in traceback, traceback
    _, tb_outputs = run(bench.kc, "%tb")  # the whole traceback is one step away
    full = "".join(line for o in tb_outputs if o["msg_type"] == "error" for line in o["content"]["traceback"])
    assert "KeyboardInterrupt" in full and "threading.py" in full, full

    bench.fake.add("I am still here.")
    outputs = ok(bench.kc, "%%brute\nare you still there?")
    assert any("I am still here." in c["data"].get("text/plain", "") for c in shown(outputs))
    assert "talk slowly" in bench.sent() and "are you still there?" in bench.sent()  # accepted by the strict rules
    sent = bench.fake.requests[-1]["json"]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]  # no two user turns in a row
    assert json.dumps(sent[1]).count("word0") == 1
    assert [m["role"] for m in bench.lines("stream")][-2:] == ["user", "assistant"]


def test_a_streamed_reply_sends_what_changed_and_ends_as_the_same_final_outputs(bench: Bench) -> None:
    """Issue 21 §1: the live view is a widget fed appended text, so the wire grows with the reply, not its square;
    the live display ends as its placeholder and the final outputs are as before."""
    words = "".join(f"w{i:04d} " for i in range(400)) + "\n\n**done**"
    bench.fake.add(slow(words, delay=0.002))
    live: list[dict[str, Any]] = []
    reply_, outputs = run(bench.kc, "%%brute -s live\nstream it",
                          on_output=lambda m: live.append(m) if m["msg_type"] == "comm_msg" else None)
    assert reply_["status"] == "ok"
    ops = [op for m in live for op in live_ops(m)]
    appended = "".join(op.get("a", "") for op in ops)
    assert "w0000 " in appended and "w0399" in "".join(json.dumps(op) for op in ops)
    sent = sum(len(json.dumps(m["content"])) for m in live)
    assert sent < 20 * len(words), sent  # re-sending the whole text at each of ~100 updates would be ~50x
    # a stream that runs past the static copy's first second (a loaded machine) adds the copy's displays: not these
    outputs = [o for o in outputs
               if not o["content"].get("transient", {}).get("display_id", "").startswith("brute-copy")]
    updates = [o["content"] for o in outputs if o["msg_type"] == "update_display_data"]
    assert "application/vnd.jupyter.widget-view+json" in updates[0]["data"]
    assert updates[-1]["data"] == {"text/html": "", "text/plain": ""}
    final = [c for c in shown(outputs) if "brute-text" in c["data"].get("text/html", "")]
    assert len(final) == 1 and "<strong>done</strong>" in final[0]["data"]["text/html"]
    assert final[0]["data"]["text/plain"] == words


def test_a_streaming_turn_keeps_a_static_copy_beside_the_live_widget(bench: Bench) -> None:
    """Issue 28 §8: beside the live widget the cell holds a static copy of what streamed (what JupyterLab shows
    when the kernel dies mid-turn, instead of "model not found"), brought up to date as the reply grows and set
    back to the placeholder with the live display when the turn ends."""
    from brute_nb.notebook.views.live import COPY_CLASS, UNFINISHED

    words = " ".join(f"word{i}" for i in range(80))
    bench.fake.add(slow(words, delay=0.05))  # ~80 stream events: about four seconds
    reply_, outputs = run(bench.kc, "%%brute -s copy\nstream it slowly")
    assert reply_["status"] == "ok"
    copies = [o for o in outputs if o["content"].get("transient", {}).get("display_id", "").startswith("brute-copy")]
    assert [o["msg_type"] for o in copies][:1] == ["display_data"]
    assert {o["msg_type"] for o in copies[1:]} == {"update_display_data"}
    first, *updates, reset = [o["content"]["data"] for o in copies]
    assert f'<div class="{COPY_CLASS}">' in first["text/html"] and UNFINISHED in first["text/html"]
    assert "word0" in first["text/html"] and "word79" not in first["text/html"]
    assert updates and len(updates[-1]["text/html"]) > len(first["text/html"])  # it follows the stream
    assert reset == {"text/html": "", "text/plain": ""}
    live = [o for o in outputs if o["msg_type"] == "update_display_data" and o not in copies]
    assert "application/vnd.jupyter.widget-view+json" in live[0]["content"]["data"]
    assert outputs.index(live[-1]) < outputs.index(copies[-1])  # both reset, before the final outputs
    final = [c for c in shown([o for o in outputs if o not in copies]) if "brute-text" in c["data"]["text/html"]]
    assert len(final) == 1 and final[0]["data"]["text/plain"] == words
