from __future__ import annotations

from brute_nb.notebook.views import render


def test_footer_says_model_tokens_calls_time_and_replayed() -> None:
    text = render.footer_text(
        {"model": "fake-1", "input_tokens": 1200, "output_tokens": 34, "tool_calls": 1, "elapsed_s": 2.25,
         "replayed": True}
    )
    assert text == "fake-1 · 1,200 in / 34 out tokens · 1 tool call · 2.2 s · replayed"


def test_status_colours_come_from_the_lab_theme_with_fallbacks() -> None:
    """Dark theme (issue 32 item 8): Lab's variables, pulled toward the text colour; a plain colour first."""
    from brute_nb.notebook.views.render import STATUS_STYLE

    for status in ("ok", "error", "running"):
        style = STATUS_STYLE[status]
        first, second = style.split(";")[:2]
        assert first.startswith("color:#") and "color-mix(in srgb,var(--jp-" in second
        assert "var(--jp-content-font-color1" in second
