"""The chat panel is a real ipywidgets widget with a static fallback (issue 15, item 16): it goes into an HBox,
keeps its API, and wherever no widget can render (nbconvert HTML without widget state, a terminal) shows the
conversation, sanitised, instead of "model not found" or a raw ``VBox(...)`` repr."""

from __future__ import annotations

from pathlib import Path

import ipywidgets
import nbformat
import pytest
from bs4 import BeautifulSoup
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from notebook_helpers import WAIT

from brute_nb.notebook.front.widget import ChatWidget
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.views.chat_static import static_bundle
from brute_nb.testing import API_KEY, FakeProvider

VIEW = "application/vnd.jupyter.widget-view+json"


def test_the_panel_is_a_widget_that_fits_in_a_layout(nb: NotebookAgent, fake: FakeProvider) -> None:
    panel = ChatWidget(nb)
    assert isinstance(panel, ipywidgets.Widget)
    row = ipywidgets.HBox([panel, ipywidgets.HTML("side")])
    assert row.children[0] is panel and panel.box is panel
    assert panel.children[0] is panel.transcript and panel.children[-1] is panel.status  # what it writes, it shows
    fake.add("Hello **there** <script>alert(1)</script>")
    panel.send("hi <b>you</b>")
    assert panel.wait_idle(WAIT)
    panel.focus()  # ipywidgets' own Widget.send (a custom message) still works beside the chat's send(text)
    bundle = panel._repr_mimebundle_()
    assert bundle[VIEW]["model_id"] == panel.model_id
    html, text = bundle["text/html"], bundle["text/plain"]
    assert "<strong>there</strong>" in html and "hi &lt;b&gt;you&lt;/b&gt;" in html and "<script" not in html
    assert "brute-status" in html and "idle" in html
    assert text.startswith("you: hi <b>you</b>") and "Hello **there**" in text and "VBox(" not in text


def test_a_panel_over_history_shows_it_before_any_turn(nb: NotebookAgent, fake: FakeProvider) -> None:
    fake.add("earlier reply")
    nb.ask("earlier question", display=False)
    text = ChatWidget(nb)._repr_mimebundle_()["text/plain"]
    assert text.startswith("you: earlier question\n\nearlier reply")


def test_the_static_copy_says_it_is_saved_and_what_to_type_for_a_live_panel(nb: NotebookAgent) -> None:
    """After a kernel restart the copy takes the dead panel's place (issue 41 item 2): it must not read as a live
    chat with no Send button, but say what it is and the exact lines that bring a live panel back."""
    copy = BeautifulSoup(ChatWidget(nb).static()["text/html"], "html.parser")
    note = copy.select_one(".brute-chat-static .brute-chat-saved")
    assert note is not None and "saved copy" in note.get_text().lower()
    # Not the default session: the lines switch to it first (a restarted kernel starts at "default").
    assert note.select_one("pre").get_text() == "%load_ext brute_nb\n%brute use chat\n%brute chat"
    side = BeautifulSoup(static_bundle("", "", "", session="default", side=True)["text/html"], "html.parser")
    assert side.select_one(".brute-chat-saved pre").get_text() == "%load_ext brute_nb\n%brute chat --side"
    hostile = static_bundle("", "", "", session="<b>x</b>", side=False)["text/html"]
    assert "<b>x</b>" not in hostile and "&lt;b&gt;x&lt;/b&gt;" in hostile  # escaped, as everything shown


@pytest.mark.kernel
def test_nbconvert_html_of_a_saved_notebook_shows_the_conversation(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeProvider() as fake:
        for name, value in {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "",
                            "BRUTE_MODEL": "", "OLLAMA_HOST": "", "BRUTE_NB_NOTEBOOK": "chat.ipynb"}.items():
            monkeypatch.setenv(name, value)
        fake.add("The answer is **42**.")
        notebook = nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_code_cell("%load_ext brute_nb\nimport brute_nb"),
            nbformat.v4.new_code_cell("panel = brute_nb.chat()\npanel"),
            # The turn runs after the panel was shown (issue 32 item 5): its static copy must follow it.
            nbformat.v4.new_code_cell("panel.send('What is the answer?')\nassert panel.wait_idle(60)"),
        ])
        # Saved as JupyterLab saves by default: without the widget state, as after a kernel restart.
        NotebookClient(notebook, timeout=120, resources={"metadata": {"path": str(tmp_path)}},
                       store_widget_state=False).execute()
    copy, view = notebook.cells[1].outputs  # the static copy first (shown where the widget cannot be), the panel
    assert VIEW in view["data"] and "text/html" not in view["data"] and not view["data"]["text/plain"]
    assert VIEW not in copy["data"] and '<div class="brute-chat-static">' in copy["data"]["text/html"]
    assert "0 in / 0 out" not in copy["data"]["text/plain"] and "1 tool call" not in copy["data"]["text/plain"]
    assert "What is the answer?" in copy["data"]["text/plain"] and "42" in copy["data"]["text/plain"]
    html, _ = HTMLExporter().from_notebook_node(notebook)
    assert "What is the answer?" in html and "<strong>42</strong>" in html and " · idle · " in html
    assert "model not found" not in html and "VBox(" not in html
