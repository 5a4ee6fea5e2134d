from __future__ import annotations

from brute_nb.notebook.views import render
from brute_nb.notebook.views.render import ToolView


def test_tool_block_is_collapsible_and_escapes_everything() -> None:
    view = ToolView(
        call_id="c1",
        name="<img src=x onerror=alert(1)>",
        arguments={"file_path": "<b>a.py</b>"},
        status="ok",
        result="</pre><script>alert('x')</script>",
        duration_ms=12.3,
    )
    html = render.tool_html(view)
    assert html.startswith('<details class="brute-tool">') and html.endswith("</details>")
    assert "<script>" not in html and "<img" not in html and "<b>a.py" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x" in html
    assert "12 ms" in html and "ok" in html


def test_long_results_are_capped_with_a_note() -> None:
    view = ToolView("c", "read", {}, status="ok", result="x" * (render.RESULT_DISPLAY_CAP + 10))
    html = render.tool_html(view)
    assert f"showing {render.RESULT_DISPLAY_CAP:,} of {render.RESULT_DISPLAY_CAP + 10:,} characters" in html
    assert "%brute tools" in html


def test_tool_bundles_have_plain_and_markdown_fallbacks() -> None:
    view = ToolView("c", "shell", {"command": "pytest -q"}, status="error", result="Error: exit 1", duration_ms=2500)
    bundle = render.tool_bundle(view)
    assert set(bundle) == {"text/html", "text/markdown", "text/plain"}
    assert bundle["text/plain"].startswith("[shell] command=pytest -q — error · 2.5 s")
    assert "~~~~\nError: exit 1\n~~~~" in bundle["text/markdown"]


def test_short_args_one_line_and_capped() -> None:
    assert render.short_args({"a": "x\n  y", "n": 3}) == "a=x y, n=3"
    assert len(render.short_args({"a": "z" * 500})) == render.ARGS_SUMMARY_CAP


def test_footer_says_model_tokens_calls_time_and_replayed() -> None:
    text = render.footer_text(
        {"model": "fake-1", "input_tokens": 1200, "output_tokens": 34, "tool_calls": 1, "elapsed_s": 2.25,
         "replayed": True}
    )
    assert text == "fake-1 · 1,200 in / 34 out tokens · 1 tool call · 2.2 s · replayed"


def test_live_html_escapes_streamed_text() -> None:
    html = render.live_html(["<i>hi</i>", ToolView("c", "read", {})])
    assert "&lt;i&gt;hi&lt;/i&gt;" in html and "running" in html


def test_a_command_that_exits_non_zero_says_so_in_red() -> None:
    """A failing test run is not "ok" in green (issue 32 item 9)."""
    from brute_nb.notebook.views.render import FAILURE, SUCCESS, ToolView, tool_html, tool_plain

    failed = ToolView("c1", "shell", {"command": "python3 run_tests.py"}, status="ok",
                      result="FAIL test_median_even\n1 failed\n\n[exit code: 1]")
    html = tool_html(failed)
    assert f'<span style="{FAILURE}">exit 1</span>' in html and "— ok" not in tool_plain(failed)
    passed = ToolView("c2", "shell", {"command": "true"}, status="ok", result="all passed")
    assert f'<span style="{SUCCESS}">ok</span>' in tool_html(passed)
    errored = ToolView("c3", "shell", {"command": "x"}, status="error", result="Error: boom [exit code: 2]")
    assert ">error</span>" in tool_html(errored)


def test_status_colours_come_from_the_lab_theme_with_fallbacks() -> None:
    """Dark theme (issue 32 item 8): Lab's variables, pulled toward the text colour; a plain colour first."""
    from brute_nb.notebook.views.render import STATUS_STYLE

    for status in ("ok", "error", "running"):
        style = STATUS_STYLE[status]
        first, second = style.split(";")[:2]
        assert first.startswith("color:#") and "color-mix(in srgb,var(--jp-" in second
        assert "var(--jp-content-font-color1" in second


def test_a_diff_in_a_result_is_coloured_and_escaped() -> None:
    from brute_nb.notebook.views.render import ADDED, REMOVED, ToolView, tool_html

    result = ("success: true\n-not a diff line\ndiff:\n@@ -1 +1 @@\n-old <b>\n+new <script>\n same")
    html = tool_html(ToolView("c", "patch", {"file_path": "a.py"}, status="ok", result=result))
    assert "\n-not a diff line" not in html and "&#10;-not a diff line" in html  # before the hunk: plain
    assert f'<span style="{REMOVED}">-old &lt;b&gt;</span>' in html
    assert f'<span style="{ADDED}">+new &lt;script&gt;</span>' in html and "<script>" not in html
    assert 'style="opacity:.65">@@ -1 +1 @@</span>' in html and "tab-size:2" in html
