"""Issue 28 §7: ``%brute export`` writes a session as a readable transcript (sanitised as the cell is), and
``brute_nb.sessions()`` / ``%brute search`` see every session beside the notebook or under a folder."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

import brute_nb
from brute_nb.errors import PathOutsideRootError
from brute_nb.notebook.commands.export import ExportError, export, write
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.sessions.index import search
from brute_nb.testing.scripted import Scripted, call, reply

KEY = "sk-ant-api03-" + "Q" * 90
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def chat(folder: Path, stem: str, name: str, replies: list[Any], *prompts: str) -> NotebookAgent:
    nb = NotebookAgent(name, folder / f"{stem}.brute" / f"{name}.jsonl", settings=Settings(root=folder, tools="read"),
                       notebook=folder / f"{stem}.ipynb")
    nb.provider = Scripted(replies)
    for prompt in prompts:
        nb.agent.start(prompt, root=folder)
    return nb


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NotebookAgent:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # a key brute_nb knows: redacted everywhere it could show
    (tmp_path / "data.txt").write_text(f"{HOSTILE}\nkey={KEY}\n")
    return chat(tmp_path, "analysis", "main",
                [reply("Reading it.", call("read", {"file_path": "data.txt"})), f"It holds {HOSTILE} and a key."],
                "What is in data.txt? My **budget** is tight.")


def test_html_is_the_cells_sanitised_transcript_with_tool_calls_folded(session: NotebookAgent) -> None:
    page = export(list(session.log), "html", "main: a <b>title</b>").decode()
    assert page.startswith("<!doctype html>") and "<title>main: a &lt;b&gt;title&lt;/b&gt;</title>" in page
    assert "<script" not in page and "onerror" not in page.replace("onerror=alert(1)&gt;", "")
    assert "<details" in page and "data.txt" in page and KEY not in page
    assert "What is in data.txt?" in page


def test_markdown_keeps_the_text_and_fences_the_tool_call(session: NotebookAgent) -> None:
    text = export(list(session.log), "md", "main").decode()
    assert text.startswith("# main\n\n**You:**\n\n> What is in data.txt? My **budget** is tight.")
    assert "**read** `file_path=data.txt` — ok" in text  # the row as the cell's text/markdown writes it
    assert KEY not in text and "REDACTED" in text


def test_a_notebook_has_one_brute_cell_a_turn(session: NotebookAgent) -> None:
    nb = nbformat.reads(export(list(session.log), "ipynb", "main").decode(), as_version=4)
    nbformat.validate(nb)
    assert [c.cell_type for c in nb.cells] == ["markdown", "code"]
    cell = nb.cells[1]
    assert cell.source == "%%brute\nWhat is in data.txt? My **budget** is tight."
    html = cell.outputs[0].data["text/html"]
    assert "Reading it." in html and "<script" not in html and KEY not in json.dumps(nb)


def test_the_file_is_written_inside_the_folder_and_never_over_a_users_file(session: NotebookAgent,
                                                                           tmp_path: Path) -> None:
    data = export(list(session.log), "md", "main")
    mine = tmp_path / "notes.md"
    mine.write_text("my own notes")
    with pytest.raises(ExportError, match="already exists"):
        write(data, mine, tmp_path, replace=False)
    assert mine.read_text() == "my own notes"
    with pytest.raises(PathOutsideRootError):
        write(data, tmp_path.parent / "elsewhere.md", tmp_path, replace=False)
    (tmp_path / "link.md").symlink_to(tmp_path.parent / "target.md")
    with pytest.raises(PathOutsideRootError):
        write(data, tmp_path / "link.md", tmp_path, replace=True)
    assert not (tmp_path.parent / "target.md").exists()
    with pytest.raises(ExportError, match="use one of md, html, ipynb"):
        export(list(session.log), "pdf", "main")


def test_sessions_and_search_span_notebooks_and_name_a_damaged_file(session: NotebookAgent, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    chat(sub, "report", "draft", ["The BUDGET was cut."], "summarise the budget")
    (tmp_path / "analysis.brute" / "broken.jsonl").write_text('{"role": "user", "content": "hi"}\n{oops\n')
    monkeypatch.chdir(tmp_path)
    beside = brute_nb.sessions()  # beside the notebook: this folder's <stem>.brute/ only
    assert sorted(beside["session"]) == ["broken", "main"]
    broken = beside.set_index("session").loc["broken"]
    assert "broken.jsonl:2" in broken["error"]
    main = beside.set_index("session").loc["main"]
    assert main["messages"] == 4 and main["tool_calls"] == 1 and main["first_prompt"].startswith("What is in")
    everywhere = brute_nb.sessions(tmp_path)
    assert sorted(everywhere["session"]) == ["broken", "draft", "main"]
    assert set(everywhere["notebook"]) == {str(tmp_path / "analysis.ipynb"), str(sub / "report.ipynb")}

    hits = search("budget", tmp_path)
    assert sorted(zip(hits["session"], hits["role"], strict=True)) == [
        ("draft", "assistant"), ("draft", "user"), ("main", "user")]
    assert hits.set_index("session").loc["main", "snippet"] == "What is in data.txt? My **budget** is tight."
    with pytest.raises(ValueError, match="needs some text"):
        search("  ")


def test_brute_export_and_search(shell: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from brute_nb.notebook.registry import registry

    shell.run_line_magic("brute", f"config notebook={tmp_path / 'demo.ipynb'}")
    nb = registry().current()
    nb.provider = Scripted(["Sure: the plan is ready."])
    nb.ask("make a plan", display=False)
    capsys.readouterr()
    shell.run_line_magic("brute", "export --format md")
    out = capsys.readouterr().out
    written = nb.session_path.with_suffix(".md")
    assert f"exported as md: {written}" in out and "> make a plan" in written.read_text()
    shell.run_line_magic("brute", "export --format=html plan.html")
    assert (tmp_path / "plan.html").read_text().startswith("<!doctype html>")
    with pytest.raises(Exception, match="already exists"):
        shell.run_line_magic("brute", "export --format=html plan.html")
    hits = shell.run_line_magic("brute", "search PLAN")
    assert list(hits["role"]) == ["user", "assistant"]


def test_search_shows_where_and_what_in_a_notebook(tmp_path: Path, shell: Any) -> None:
    """Issue 41 item 4: the hits showed absolute paths, ``NaT`` for a message with no time, a result's tabs as
    ``\\t``, and a snippet cut to pandas' 50 characters."""
    from brute_nb.notebook.views.frame_view import frame_html

    sub = tmp_path / "reports"
    sub.mkdir()
    tail = " and then some more words to make the snippet longer than fifty characters"
    chat(sub, "q3", "main", [reply("Reading.", call("read", {"file_path": "x"})), "The budget\tis 3" + tail],
         "what is the budget?")
    hits = search("budget", tmp_path)
    assert list(hits["role"]) == ["user", "assistant"]
    html = frame_html(hits) or ""
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td>(.*?)</td>", html, flags=re.S)]
    assert cells[0] == "reports/q3.ipynb" and str(tmp_path) not in "".join(cells)
    assert "NaT" not in html and "\\t" not in html and "\t" not in hits["snippet"].iloc[1]
    assert ("The budget is 3" + tail) in cells


def test_an_export_is_titled_at_a_word_and_shown_as_a_link(shell: Any, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41 item 4: the title was the first prompt cut at 60 characters, mid-word, and the written file's path
    was printed as text, where a notebook can show a link that opens it."""
    from IPython.core.displaypub import CapturingDisplayPublisher

    from brute_nb.message import Log
    from brute_nb.notebook.commands.export import preview
    from brute_nb.notebook.registry import registry

    long = "Please summarise the quarterly budget report and list every department that overspent"
    log = Log()
    log.user(long)
    title = preview(list(log))
    assert title.endswith("…") and long.startswith(title[:-1]) and long[len(title) - 1] == " ", title

    shell.run_line_magic("brute", f"config notebook={tmp_path / 'demo.ipynb'}")
    nb = registry().current()
    nb.provider = Scripted(["Done."])
    nb.ask(long, display=False)
    capsys.readouterr()
    shell.run_line_magic("brute", "export --format md")
    assert f"exported as md: {nb.session_path.with_suffix('.md')}" in capsys.readouterr().out  # a terminal's text
    shell.display_pub = CapturingDisplayPublisher()
    shell.run_line_magic("brute", "export --format md other.md")
    page = next(out["data"]["text/html"] for out in shell.display_pub.outputs if "text/html" in out["data"])
    assert '<a href="other.md"' in page and str(tmp_path) not in page.split("title=")[0]
