"""Tool blocks read well in JupyterLab's light and dark themes (issue 32, items 8 and 9): every status colour and
both diff colours reach 4.5:1 against the background they are drawn on (WCAG AA for 13 px text), an open block is
grouped by its rule, and a command that exited non-zero says so in its summary.

The blocks are the real ``display.tool_bundle`` of each status, published in a cell; the theme is switched from
Lab's Settings menu, as a person would. Colours are read as the browser paints them (a canvas turns any CSS colour,
``color-mix`` included, into RGB), and the background is the first opaque one behind the text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lab_helpers import Lab, notebook_page, output_of, run_cell, shot, wait_ran

pytestmark = pytest.mark.browser

NOTEBOOK = "theme.ipynb"
BLOCKS = """from IPython.display import display
from brute_nb.notebook.views.display import tool_bundle
from brute_nb.notebook.views.render import STATUS_STYLE
from brute_nb.notebook.views.tool_row import ToolView

diff = "edited stats.py\\n@@ -1,2 +1,2 @@\\n-old line\\n+new line\\n same line"
for status in STATUS_STYLE:
    view = ToolView(call_id=status, name="patch", arguments={"file_path": "stats.py"}, status=status,
                    result=diff if status == "ok" else "x", duration_ms=12)
    display(tool_bundle(view), raw=True)
failed = ToolView(call_id="t", name="shell", arguments={"command": "pytest"}, status="ok",
                  result="1 failed\\n[exit code: 1]", duration_ms=30)
display(tool_bundle(failed), raw=True)"""
CELLS = ("%load_ext brute_nb", BLOCKS)

# The contrast of each element's text with the first opaque background behind it (WCAG 2 relative luminance).
CONTRASTS = """(els) => {
  const ctx = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
  const rgb = (css) => {
    ctx.clearRect(0, 0, 1, 1); ctx.fillStyle = '#000'; ctx.fillStyle = css; ctx.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
    return { r, g, b, a: a / 255 };
  };
  const background = (el) => {
    for (let node = el; node; node = node.parentElement) {
      const bg = getComputedStyle(node).backgroundColor;
      if (bg && rgb(bg).a === 1 && bg !== 'transparent' && !bg.endsWith(', 0)')) return rgb(bg);
    }
    return rgb(getComputedStyle(document.body).backgroundColor);
  };
  const lum = ({ r, g, b }) => {
    const [R, G, B] = [r, g, b].map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  return els.map((el) => {
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))];
    return [el.textContent.trim().slice(0, 40), (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)];
  });
}"""


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    with notebook_page(lab, browser, NOTEBOOK, CELLS) as pg:
        cell = run_cell(pg, "STATUS_STYLE")
        wait_ran(cell)
        output_of(pg, "STATUS_STYLE").locator("details.brute-tool").last.wait_for()
        yield pg


def set_theme(page: Any, name: str) -> None:
    page.click(".lm-MenuBar-itemLabel:text-is('Settings')")
    page.hover(".lm-Menu-itemLabel:visible:text-is('Theme')")
    page.click(f".lm-Menu-itemLabel:visible:text-is('{name}')")
    light = name == "JupyterLab Light"
    page.wait_for_function("(light) => document.body.dataset.jpThemeLight === String(light)", arg=light)
    page.wait_for_timeout(500)  # the theme's stylesheet applied


def coloured(page: Any) -> list[tuple[str, float]]:
    out = output_of(page, "STATUS_STYLE")
    for details in out.locator("details.brute-tool").all():
        details.evaluate("(el) => { el.open = true; }")
    statuses = out.locator("details.brute-tool summary span[style*='color']").all()
    diff = out.locator("details.brute-tool pre span[style*='color']").all()
    assert len(statuses) >= 7 and len(diff) == 2, (len(statuses), len(diff))
    handles = [s.element_handle() for s in [*statuses, *diff]]
    return [(text, ratio) for text, ratio in page.evaluate(CONTRASTS, handles)]


@pytest.mark.parametrize("theme", ["JupyterLab Dark", "JupyterLab Light"])
def test_status_and_diff_colours_reach_aa_contrast(page: Any, theme: str) -> None:
    set_theme(page, theme)
    ratios = coloured(page)
    shot(page, f"lab-theme-{theme.split()[-1].lower()}")
    low = [(text, round(ratio, 2)) for text, ratio in ratios if ratio < 4.5]
    assert not low, f"below 4.5:1 on {theme}: {low}"


def test_an_open_block_is_grouped_and_a_failed_command_says_so(page: Any) -> None:
    set_theme(page, "JupyterLab Light")
    out = output_of(page, "STATUS_STYLE")
    failed = out.locator("details.brute-tool", has_text="pytest")
    assert "exit 1" in failed.locator("summary").inner_text() and " ok" not in failed.locator("summary").inner_text()
    failed.evaluate("(el) => { el.open = true; }")
    body = failed.locator("summary + div")
    width = body.evaluate("(el) => parseFloat(getComputedStyle(el).borderLeftWidth)")
    assert width >= 1, "an open block's body has no rule grouping it under its summary"
