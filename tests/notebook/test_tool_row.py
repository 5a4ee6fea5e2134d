"""A tool row (``views.tool_row.ToolView``) and its forms: HTML (the cell, the chat panel, the HTML export),
Markdown (the cell's ``text/markdown``, the Markdown export), plain text (the cell's ``text/plain``, a notebook
export) and the terminal's line.

Each form is read back as a person sees it (HTML and rendered Markdown as their text) and must say the same things
about the same row: name, arguments, status, time, size, the result as far as it is shown, and the note when it
was cut (the terminal prints one line a call: the size stands for the result there). Every string of the shared
hostile-case table (``tests/security/hostile``) goes through every form as a row's name, argument and result: no
form lets any of it run, load or reach a terminal as an escape, and no key shows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from typing import Any

import mistune
import nbformat
import pytest

from brute_nb.message import Message, Role, ToolCall
from brute_nb.notebook.commands import export
from brute_nb.notebook.views import render
from brute_nb.notebook.views.display import tool_bundle
from brute_nb.notebook.views.live import live_html
from brute_nb.notebook.views.tool_html import ADDED, REMOVED, tool_html
from brute_nb.notebook.views.tool_markdown import tool_markdown
from brute_nb.notebook.views.tool_row import ARGS_SUMMARY_CAP, RESULT_DISPLAY_CAP, ToolView, short_args
from brute_nb.notebook.views.tool_text import tool_line, tool_plain
from brute_nb.notebook.views.transcript_html import segments_html, turns
from brute_nb.testing.hostile import HTML_PAYLOADS, MARKDOWN_PAYLOADS, REPLY, live_parts
from tests.security.hostile import ALL
from tests.security.hostile.replies import KEY_HERE
from tests.security.test_terminal_and_fences import ESCAPES

PASS_RAW_HTML = mistune.create_markdown(escape=False, plugins=["strikethrough", "table", "url"])
"""How JupyterLab and nbconvert render a trusted output's Markdown: raw HTML kept."""


def text_of(html: str) -> str:
    """What a person reads in ``html``: its text, entities decoded, tags gone."""
    parts: list[str] = []

    class Text(HTMLParser):
        def handle_data(self, data: str) -> None:
            parts.append(data)

    Text(convert_charrefs=True).feed(html)
    return "".join(parts)


FORMS: dict[str, Callable[[ToolView], str]] = {
    "cell html": lambda v: text_of(tool_html(v)),
    "chat panel": lambda v: text_of(segments_html([v])),
    "markdown": lambda v: text_of(str(PASS_RAW_HTML(tool_markdown(v)))),
    "plain": tool_plain,
    "terminal": tool_line,
}
ONE_LINE = {"terminal"}
"""Forms that show a row as its summary line alone: the size says there is a result."""

CUT = "".join(f"line {i}\n" for i in range(900))
ROWS = {
    "ok": ToolView("c1", "read", {"file_path": "stats.py"}, status="ok", result="4: mean\n9: median",
                   duration_ms=14),
    "error": ToolView("c2", "shell", {"command": "pytest -q"}, status="error", result="Error: exit 1",
                      duration_ms=2500),
    "exit 1": ToolView("c3", "shell", {"command": "python3 run_tests.py"}, status="ok",
                       result="FAIL test_median_even\n1 failed\n\n[exit code: 1]", duration_ms=759),
    "denied": ToolView("c4", "write", {"file_path": "a.py", "content": "x = 1"}, status="denied",
                       result="Error: ApprovalDenied: denied by user", meta={"approval": "denied by user"}),
    "server": ToolView("s1", "web_search", {"query": "capital of France"}, status="server",
                       result='[{"title": "Paris"}]'),
    "running": ToolView("c5", "fetch", {"url": "https://example.org"}),
    "interrupted": ToolView("c6", "shell", {"command": "sleep 60"}, status="interrupted",
                            result="Error: interrupted", duration_ms=1200),
    "cut": ToolView("c7", "read", {"file_path": "big.log"}, status="ok", result=CUT, duration_ms=3),
}


@pytest.mark.parametrize("row", sorted(ROWS))
@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_says_the_same_about_a_row(form: str, row: str) -> None:
    view = ROWS[row]
    shown = FORMS[form](view)
    said = {"name": view.name, "arguments": view.args_line, **dict(enumerate(view.summary_bits()))}
    assert {what: fact for what, fact in said.items() if str(fact) not in shown} == {}, shown
    body = view.shown_result is not None and form not in ONE_LINE
    assert (view.shown_result or "" if body else "") in shown
    assert (view.cut_note() in shown) == (body and view.cut), shown
    if form in ONE_LINE:
        assert "\n" not in shown


def test_the_facts_are_the_rows_own() -> None:
    assert ROWS["exit 1"].summary_bits() == ["exit 1", "759 ms", "46 chars"] and ROWS["exit 1"].tone == "error"
    assert ROWS["server"].summary_bits() == ["run by the provider", "20 chars"]
    assert ROWS["running"].summary_bits() == ["running"]
    cut = ROWS["cut"]
    assert cut.cut and cut.shown_result == CUT[:RESULT_DISPLAY_CAP]
    assert cut.cut_note() == (f"showing {RESULT_DISPLAY_CAP:,} of {len(CUT):,} characters; the full result is in "
                              "%brute tools (or brute_nb.current().tool_calls_df)")


def test_a_refused_call_finishes_as_denied_in_every_view() -> None:
    """The live row (``finish``) said "error" where the transcript from the log and the terminal said "denied"."""
    view = ToolView("c", "shell", {"command": "rm -rf build"})
    result = Message(Role.TOOL, "Error: ApprovalDenied", tool_call_id="c", meta={"approval": "denied by user"})
    view.finish({"message": result, "is_error": True, "duration_ms": 1.0})
    assert view.status == "denied" and "denied" in tool_line(view) and ">denied</span>" in tool_html(view)


def test_the_cell_and_the_exports_render_a_row_through_the_same_renderers() -> None:
    call = ToolCall(id="c1", name="read", arguments={"file_path": "data.txt"})
    messages = [Message(Role.USER, "what is in data.txt?"), Message(Role.ASSISTANT, "Reading.", tool_calls=(call,)),
                Message(Role.TOOL, "[exit code: 3]", tool_call_id="c1", meta={"duration_ms": 5}),
                Message(Role.ASSISTANT, "Done.")]
    rows = [item for _, items in turns(messages) for item in items if isinstance(item, ToolView)]
    assert len(rows) == 1
    (row,) = rows
    bundle = tool_bundle(row)
    assert bundle == {"text/html": tool_html(row), "text/markdown": tool_markdown(row), "text/plain": tool_plain(row)}
    assert tool_markdown(row) in export.markdown(messages, "t") and "exit 3" in tool_markdown(row)
    assert tool_html(row) in export.html_page(messages, "t")
    outputs = [o for cell in nbformat.reads(export.notebook(messages, "t"), as_version=4).cells
               for o in cell.get("outputs", ())]
    assert any(tool_plain(row) in o["data"]["text/plain"] and tool_html(row) in o["data"]["text/html"]
               for o in outputs)


def table_strings(value: Any) -> Iterator[str]:
    """Every string in a hostile case's data, however nested (bytes read as text; tampering functions skipped)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")[:5000]
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from table_strings(key)
            yield from table_strings(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from table_strings(item)


HOSTILE = sorted({s for case in ALL for s in table_strings(case.data)} | set(HTML_PAYLOADS) | set(MARKDOWN_PAYLOADS)
                 | set(ESCAPES.values()) | {REPLY, "```\n<img src=x onerror=alert(1)>\n```", "a`b` <i>c</i>"})
KEY = "sk-ant-api03-hostile-row-key-0000000000000000"


def test_the_table_gives_strings_of_every_kind() -> None:
    """The check below is only worth something if the table reached it: markup, links, escapes and the key."""
    assert len(HOSTILE) > 50 and any("onerror" in s for s in HOSTILE) and any(KEY_HERE in s for s in HOSTILE)
    assert any("\x1b" in s for s in HOSTILE) and any("javascript:" in s for s in HOSTILE)


@pytest.mark.parametrize("hostile", HOSTILE, ids=lambda s: repr(s[:40]))
def test_a_hostile_row_is_inert_in_every_form(hostile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    text = hostile.replace(KEY_HERE, KEY)
    for view in (ToolView("c", text, {"arg": text, text[:30] or "x": text}, status="ok", result=text, duration_ms=1),
                 ToolView("c", "read", {"file_path": text}, status="ok", result=text + "x" * RESULT_DISPLAY_CAP,
                          meta={"approval": text})):
        html = [tool_html(view), tool_html(view, open_=True), segments_html([view]), live_html([view]),
                str(PASS_RAW_HTML(tool_markdown(view)))]
        assert [live_parts(part) for part in html] == [[]] * len(html)
        plains = [tool_plain(view), tool_line(view), tool_markdown(view)]
        for shown in plains:
            assert not any(ch in shown for ch in "\x1b\x9b\x07\x08\r"), repr(shown)
        assert [form for form in [*html, *plains] if KEY in form] == []


def test_tool_block_is_collapsible_and_escapes_everything() -> None:
    view = ToolView(call_id="c1", name="<img src=x onerror=alert(1)>", arguments={"file_path": "<b>a.py</b>"},
                    status="ok", result="</pre><script>alert('x')</script>", duration_ms=12.3)
    html = tool_html(view)
    assert html.startswith('<details class="brute-tool">') and html.endswith("</details>")
    assert "<script>" not in html and "<img" not in html and "<b>a.py" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x" in html
    assert "12 ms" in html and "ok" in html


def test_long_results_are_capped_with_a_note() -> None:
    view = ToolView("c", "read", {}, status="ok", result="x" * (RESULT_DISPLAY_CAP + 10))
    html = tool_html(view)
    assert f"showing {RESULT_DISPLAY_CAP:,} of {RESULT_DISPLAY_CAP + 10:,} characters" in html
    assert "<code>%brute tools</code>" in html


def test_tool_bundles_have_plain_and_markdown_fallbacks() -> None:
    view = ToolView("c", "shell", {"command": "pytest -q"}, status="error", result="Error: exit 1", duration_ms=2500)
    bundle = tool_bundle(view)
    assert set(bundle) == {"text/html", "text/markdown", "text/plain"}
    assert bundle["text/plain"] == "[shell] command=pytest -q — error · 2.5 s · 13 chars\nError: exit 1"
    assert bundle["text/markdown"] == ("**shell** `command=pytest -q` — error · 2.5 s · 13 chars\n\n"
                                       "~~~~\nError: exit 1\n~~~~")


def test_short_args_one_line_and_capped() -> None:
    assert short_args({"a": "x\n  y", "n": 3}) == "a=x y, n=3"
    assert len(short_args({"a": "z" * 500})) == ARGS_SUMMARY_CAP


def test_live_html_escapes_streamed_text() -> None:
    html = live_html(["<i>hi</i>", ToolView("c", "read", {})])
    assert "&lt;i&gt;hi&lt;/i&gt;" in html and "running" in html


def test_a_command_that_exits_non_zero_says_so_in_red() -> None:
    """A failing test run is not "ok" in green (issue 32 item 9)."""
    failed = ToolView("c1", "shell", {"command": "python3 run_tests.py"}, status="ok",
                      result="FAIL test_median_even\n1 failed\n\n[exit code: 1]")
    html = tool_html(failed)
    assert f'<span style="{render.FAILURE}">exit 1</span>' in html and "— ok" not in tool_plain(failed)
    passed = ToolView("c2", "shell", {"command": "true"}, status="ok", result="all passed")
    assert f'<span style="{render.SUCCESS}">ok</span>' in tool_html(passed)
    errored = ToolView("c3", "shell", {"command": "x"}, status="error", result="Error: boom [exit code: 2]")
    assert ">error</span>" in tool_html(errored)


def test_a_diff_in_a_result_is_coloured_and_escaped() -> None:
    result = ("success: true\n-not a diff line\ndiff:\n@@ -1 +1 @@\n-old <b>\n+new <script>\n same")
    html = tool_html(ToolView("c", "patch", {"file_path": "a.py"}, status="ok", result=result))
    assert "\n-not a diff line" not in html and "&#10;-not a diff line" in html  # before the hunk: plain
    assert f'<span style="{REMOVED}">-old &lt;b&gt;</span>' in html
    assert f'<span style="{ADDED}">+new &lt;script&gt;</span>' in html and "<script>" not in html
    assert 'style="opacity:.65">@@ -1 +1 @@</span>' in html and "tab-size:2" in html
