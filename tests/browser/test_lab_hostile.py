"""Hostile model text in JupyterLab (issue 14 §1–2): nothing it holds runs or loads, in the cell and the widget.

A ``%%brute`` cell's scripted reply, and the file its tool reads, carry every payload of
``brute_nb.testing.hostile``: raw ``<img onerror>``, ``<svg onload>``, ``<details><img onerror>``, ``<script>``,
``javascript:``/``data:`` links, remote images, iframes and CSS ``url()``. Each handler would set
``window.__brute_xss``; each remote reference names ``attacker.example``. The page logs every request it makes.
Then the notebook is saved, reopened (its outputs are now trusted, signed by Lab on save) and checked again, and
``jupyter nbconvert --to html`` of the saved file must hold no live handler or script the template did not bring.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import nbformat
import pytest
from lab_helpers import (
    Lab,
    notebook_page,
    open_notebook,
    output_of,
    read_saving,
    run_cell,
    select_cell,
    shot,
    wait_ran,
)

from brute_nb.notebook.views.chat_static import STYLE
from brute_nb.testing import call, reply
from brute_nb.testing.hostile import EXFIL_HOST, FLAG, REPLY, live_parts

pytestmark = pytest.mark.browser

NOTEBOOK = "hostile.ipynb"
ASK = "%%brute\nSummarise page.md for me."
WIDGET = 'hostile_panel = brute_nb.chat("hostile_widget")\nhostile_panel'
CELLS = ("%load_ext brute_nb\nimport brute_nb", ASK, WIDGET)
LIVE_IN_OURS = ", ".join(f"{block} {tag}" for block in (".brute-text", ".brute-tool", ".brute-user")
                         for tag in ("img", "svg", "iframe", "object", "embed", "script", "style"))
"""Elements that run or load, inside brute_nb's blocks (Lab's own icons around them are SVG)."""


def record_requests(page: Any) -> None:
    page.requests = []
    page.on("request", lambda request: page.requests.append(request.url))


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    (lab.root / "page.md").write_text(REPLY)
    with notebook_page(lab, browser, NOTEBOOK, CELLS, watch=record_requests) as pg:
        yield pg


def foreign_requests(page: Any, lab: Lab) -> list[str]:
    """Requests that left for anywhere but the Lab server (an exfiltrating image, frame or stylesheet)."""
    lab_host = urlparse(lab.url).netloc
    return [u for u in page.requests if urlparse(u).scheme in ("http", "https", "ws", "wss")
            and urlparse(u).netloc != lab_host]


def assert_nothing_ran(page: Any, lab: Lab) -> None:
    page.wait_for_timeout(500)  # a handler fires as its element is inserted or fails to load: give it the chance
    assert page.evaluate(f"window.{FLAG} ?? null") is None, "a handler in model text ran in the page"
    assert foreign_requests(page, lab) == [], "a request left the page"
    assert not any(EXFIL_HOST in u or "SECRET" in u for u in page.requests)


def test_a_hostile_reply_in_a_cell_runs_nothing_and_loads_nothing(page: Any, lab: Lab) -> None:
    lab.fake.add(reply("Reading it.", call("read", {"file_path": "page.md"})), REPLY)
    cell = run_cell(page, "Summarise page.md")
    wait_ran(cell)
    out = output_of(page, "Summarise page.md")
    out.locator(".jp-OutputArea-output", has_text="Done.").last.wait_for()
    out.locator("details.brute-tool summary").first.click()  # the tool result with the payloads, shown
    shot(page, "lab-hostile-cell")
    assert_nothing_ran(page, lab)
    assert out.locator(LIVE_IN_OURS).count() == 0
    assert "<img src=x onerror" in out.inner_text()  # the payloads are shown as text, not swallowed
    assert out.locator("a", has_text="image: exfil").count() >= 1  # the remote image became a link


def test_a_hostile_reply_in_the_widget_runs_nothing_and_loads_nothing(page: Any, lab: Lab) -> None:
    run_cell(page, "brute_nb.chat(")
    panel = output_of(page, "brute_nb.chat(").locator(".jupyter-widgets:visible").first
    panel.locator(".brute-status", has_text="idle").wait_for()
    lab.fake.add(REPLY)
    panel.locator("textarea:visible").fill("Summarise it again here.")
    panel.locator("button:visible", has_text="Send").click()
    panel.locator(".brute-chat", has_text="Done.").wait_for()
    panel.locator(".brute-status", has_text="idle").wait_for()
    shot(page, "lab-hostile-widget")
    assert_nothing_ran(page, lab)
    assert panel.locator(LIVE_IN_OURS).count() == 0


def test_the_saved_notebook_reopened_and_exported_stays_inert(page: Any, lab: Lab) -> None:
    select_cell(page, "Summarise page.md")  # the editor, never the output: a click there could follow a link
    page.keyboard.press("Control+s")
    for _ in range(120):
        if saved_reply(lab.root / NOTEBOOK):
            break
        page.wait_for_timeout(500)
    assert saved_reply(lab.root / NOTEBOOK), "the notebook was not saved with the cell's outputs"

    page.requests.clear()
    page.reload()
    open_notebook(page, lab, NOTEBOOK)
    output_of(page, "Summarise page.md").locator(".jp-OutputArea-output", has_text="Done.").last.wait_for()
    assert_nothing_ran(page, lab)

    html = export_html(lab.root / NOTEBOOK, lab.root.parent / "export")
    empty = nbformat.read(lab.root / NOTEBOOK, as_version=4)
    for cell in empty.cells:
        cell.outputs = []
    nbformat.write(empty, lab.root.parent / "empty.ipynb")
    baseline = live_parts(export_html(lab.root.parent / "empty.ipynb", lab.root.parent / "export"))
    # The chat panel's static copy carries brute_nb's own fixed stylesheet (which of copy and panel shows; no url(),
    # nothing of the model's): not a part the model's text made.
    assert STYLE in html  # the panel's copy is in the export (the check below is not vacuous)
    added = live_parts(html.replace(STYLE, ""))
    for part in baseline:
        if part in added:
            added.remove(part)
    assert added == [], added
    assert "Done." in html and "__brute_xss" in html  # the payloads are in the export, as inert text


def saved_reply(path: Path) -> bool:
    saved = read_saving(path)
    if saved is None:
        return False
    return any("Done." in o.get("data", {}).get("text/plain", "") for o in saved.cells[1].get("outputs", []))


def export_html(notebook: Path, folder: Path) -> str:
    """``jupyter nbconvert --to html``, as the README's users run it."""
    folder.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(folder), str(notebook)],
                   check=True, capture_output=True, timeout=120)
    return (folder / f"{notebook.stem}.html").read_text()
