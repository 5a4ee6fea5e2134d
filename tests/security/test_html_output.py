"""Issue 14 §1–2: model text never reaches a renderer as live HTML, and never loads a remote image.

Each mimetype a cell or the widget publishes is rendered the way its consumers render it (``text/html`` as is;
``text/markdown`` with raw HTML passed through, as JupyterLab's marked and nbconvert's mistune do for a trusted
output) and scanned for anything that runs or loads without a click (``brute_nb.testing.hostile.live_parts``).
The nbconvert checks export real notebooks: one built from the cell's own bundles, one run in a real kernel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mistune
import nbformat
import pytest

from brute_nb.message import Message, Role, ToolCall
from brute_nb.notebook.views import render
from brute_nb.notebook.views.display import CellView
from brute_nb.notebook.views.live import live_html
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.notebook.views.transcript_html import log_html, segments_html
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.testing.hostile import EXFIL_URL, HTML_PAYLOADS, MARKDOWN_PAYLOADS, REPLY, live_parts

PASS_RAW_HTML = mistune.create_markdown(escape=False, plugins=["strikethrough", "table", "url"])
"""How a trusted output's Markdown is rendered by JupyterLab and nbconvert: raw HTML kept."""


def rendered(bundle: dict[str, str]) -> str:
    """Everything a renderer would turn into DOM from this bundle, as HTML."""
    out = [bundle.get("text/html", "")]
    if "text/markdown" in bundle:
        out.append(str(PASS_RAW_HTML(bundle["text/markdown"])))
    return "".join(out)


def turn_messages(text: str = REPLY) -> list[Message]:
    call_ = ToolCall(id="c1", name="read", arguments={"file_path": "page.html"})
    return [
        Message(Role.USER, "summarise page.html"),
        Message(Role.ASSISTANT, "Reading it.", tool_calls=(call_,)),
        Message(Role.TOOL, text, tool_call_id="c1", meta={"tool_name": "read"}),
        Message(Role.ASSISTANT, text),
    ]


def published_bundles(messages: list[Message]) -> list[dict[str, str]]:
    bundles: list[dict[str, str]] = []
    view = CellView(publish=lambda bundle, *a, **k: bundles.append(dict(bundle)), update=lambda *a, **k: None)
    view.model.messages = list(messages)
    view.finish()
    return bundles


@pytest.mark.parametrize("payload", HTML_PAYLOADS + MARKDOWN_PAYLOADS)
def test_each_payload_in_assistant_text_is_inert_in_every_mimetype(payload: str) -> None:
    bundle = render.text_bundle(f"Summary:\n\n{payload}\n")
    assert live_parts(rendered(bundle)) == []
    assert "\x1b" not in bundle["text/plain"]


def test_the_cell_publishes_nothing_live(tmp_path: Path) -> None:
    bundles = published_bundles(turn_messages())
    assert len(bundles) >= 3
    for bundle in bundles:
        assert live_parts(rendered(bundle)) == [], bundle
    text = [b for b in bundles if "brute-text" in b.get("text/html", "")][-1]
    assert "Here is the summary" in text["text/html"] and "Done." in text["text/html"]
    assert "&lt;img src=x onerror" in text["text/html"]  # shown as text, so the user sees what was attempted


def test_remote_images_become_links_the_user_may_click() -> None:
    html = render.markdown_html(f"look: ![chart]({EXFIL_URL})")
    assert live_parts(html) == []
    assert f'<a href="{EXFIL_URL.replace("&", "&amp;")}"' in html and "image: chart" in html


def test_the_widget_transcript_is_inert() -> None:
    messages = turn_messages()
    view = CellView(publish=lambda *a, **k: None, update=lambda *a, **k: None)
    view.model.messages = messages
    for html in (log_html(messages), segments_html(view.model.final_segments())):
        assert live_parts(html) == []
        assert "Here is the summary" in html


def test_the_live_display_while_streaming_is_inert() -> None:
    assert live_parts(live_html([REPLY, ToolView("c", "read", {"f": REPLY}, result=REPLY)])) == []


def exported_live(nb: Any, tmp_path: Path) -> dict[str, list[str]]:
    """What the notebook's outputs add to each nbconvert export's live parts (the template's own are subtracted)."""
    from nbconvert import HTMLExporter, MarkdownExporter

    bare = nbformat.from_dict(nb)
    empty = nbformat.from_dict(nb)
    for cell in empty.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    found: dict[str, list[str]] = {}
    for name, exporter in (("html", HTMLExporter()), ("markdown", MarkdownExporter())):
        full, _ = exporter.from_notebook_node(bare)
        base, _ = exporter.from_notebook_node(empty)
        if name == "markdown":
            full, base = str(PASS_RAW_HTML(full)), str(PASS_RAW_HTML(base))
        baseline = list(live_parts(base))
        extra = live_parts(full)
        for part in baseline:
            if part in extra:
                extra.remove(part)
        found[name] = extra
        (tmp_path / f"export.{name}").write_text(full)
    return found


def test_nbconvert_exports_of_the_cells_outputs_are_inert(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%brute\nsummarise page.html")
    cell.outputs = [nbformat.v4.new_output("display_data", data=b) for b in published_bundles(turn_messages())]
    nb.cells = [cell]
    assert exported_live(nb, tmp_path) == {"html": [], "markdown": []}
    html = (tmp_path / "export.html").read_text()
    assert "Here is the summary" in html


@pytest.mark.kernel
def test_a_real_brute_cell_saved_and_exported_is_inert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbclient import NotebookClient

    (tmp_path / "page.html").write_text(REPLY)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in (
        "%load_ext brute_nb",
        "import brute_nb\nbrute_nb.configure(notebook='hostile.ipynb')",
        "%%brute\nsummarise page.html",
    )]
    with FakeProvider([reply("Reading it.", call("read", {"file_path": "page.html"})), REPLY]) as fake:
        for key, value in {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": str(fake.api_key),
                           "OPENAI_API_KEY": "", "BRUTE_MODEL": "", "OLLAMA_HOST": ""}.items():
            monkeypatch.setenv(key, value)
        client = NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}})
        client.execute()
    outputs = nb.cells[2].outputs
    assert any("Done." in o.get("data", {}).get("text/plain", "") for o in outputs), outputs
    for output in outputs:
        assert live_parts(rendered(dict(output.get("data", {})))) == [], output
    assert exported_live(nb, tmp_path) == {"html": [], "markdown": []}


def test_the_sanitiser_is_built_once_and_cleans_as_nh3_clean_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """``nh3.clean`` builds its allow-lists on every call (most of a short reply's render): the render keeps one
    ``nh3.Cleaner``, configured as the ``clean`` call was, so every payload comes out the same."""
    import nh3

    built: list[int] = []
    real = nh3.Cleaner

    def counting(**options: Any) -> Any:
        built.append(1)
        return real(**options)

    monkeypatch.setattr(nh3, "Cleaner", counting)
    render._cleaner.cache_clear()
    try:
        for payload in [*HTML_PAYLOADS, *MARKDOWN_PAYLOADS]:
            html = mistune.html(payload)
            assert render.sanitize(html) == nh3.clean(
                html, tags=set(render.SAFE_TAGS), attributes={k: set(v) for k, v in render.SAFE_ATTRIBUTES.items()},
                url_schemes=set(render.SAFE_SCHEMES), filter_style_properties={"text-align"},
                link_rel="noopener noreferrer nofollow")
    finally:
        render._cleaner.cache_clear()
    assert built == [1]
