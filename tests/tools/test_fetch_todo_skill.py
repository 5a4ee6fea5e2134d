"""fetch (MockTransport and a 127.0.0.1 server, never the network), todo_write/todo_read, skill."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from brute_nb.errors import ToolArgumentError
from brute_nb.tools import Fetch, SkillLoad, SkillWarning, TodoRead, TodoWrite, discover_skills, skills_prompt
from tests.loopback import Handler, serve

pytestmark = pytest.mark.anyio


def mock(handler: Any) -> Fetch:
    return Fetch(transport=httpx2.MockTransport(handler))


async def test_fetch_html_becomes_markdown(run: Any) -> None:
    html = "<html><head><script>evil()</script></head><body><h1>Title</h1><p>Some <b>bold</b> text</p></body></html>"
    tool = mock(lambda request: httpx2.Response(200, html=html))
    out = await run(tool, url="https://example.test/page")
    assert out.startswith("HTTP 200 text/html; charset=utf-8\n\n")
    assert "# Title" in out and "**bold**" in out and "evil" not in out


async def test_fetch_caps_body_and_returns_error_statuses(run: Any) -> None:
    tool = mock(lambda request: httpx2.Response(404, text="x" * 60_000))
    out = await run(tool, url="http://example.test/")
    assert out.startswith("HTTP 404 text/plain")
    assert out.endswith("x" * 10 + "\n...(truncated)")
    assert len(out) < 50_100


async def test_fetch_follows_up_to_five_redirects(run: Any) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        n = int(request.url.path.strip("/") or 0)
        if n < 5:
            return httpx2.Response(302, headers={"location": f"/{n + 1}"})
        return httpx2.Response(200, text=f"landed {n}")

    out = await run(mock(handler), url="http://example.test/0")
    assert out.endswith("landed 5") and "URL: http://example.test/5" in out

    def loop(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(302, headers={"location": "/again"})

    with pytest.raises(httpx2.TooManyRedirects):
        await run(mock(loop), url="http://example.test/")


async def test_fetch_refuses_other_schemes(run: Any) -> None:
    with pytest.raises(ValueError, match="Invalid URL scheme: file"):
        await run(Fetch, url="file:///etc/passwd")


class PlainText(Handler):
    def do_GET(self) -> None:
        self.send(200, b"plain local text", {"Content-Type": "text/plain"})


@pytest.fixture
def local_server() -> Iterator[str]:
    with serve(PlainText) as server:
        yield server.url + "/"


async def test_fetch_against_a_local_server(run: Any, local_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    port = local_server.rsplit(":", 1)[1].strip("/")
    tool = Fetch(allow=[f"127.0.0.1:{port}"])  # local servers need an explicit allow-list entry
    assert await run(tool, url=local_server) == "HTTP 200 text/plain\n\nplain local text"


async def test_todos_are_replaced_wholesale_and_per_agent(run: Any, env: dict[str, Any]) -> None:
    items = [{"id": "1", "content": "plan", "status": "completed", "extra": "dropped"},
             {"id": "2", "content": "code", "status": "in_progress"}]
    assert await run(TodoWrite, todos=items) == {"success": True, "count": 2}
    assert (await run(TodoRead))["todos"] == [{"id": "1", "content": "plan", "status": "completed"},
                                               {"id": "2", "content": "code", "status": "in_progress"}]
    await run(TodoWrite, todos=[])
    assert await run(TodoRead) == {"todos": []}
    with pytest.raises(ToolArgumentError, match=r"'todos\[0\]\.status' must be one of"):
        await run(TodoWrite, todos=[{"id": "1", "content": "x", "status": "done"}])
    with pytest.raises(ToolArgumentError, match=r"missing required 'todos\[0\]\.content'"):
        await run(TodoWrite, todos=[{"id": "1", "status": "pending"}])
    other = type(run)({**env, "state": {}})
    await run(TodoWrite, todos=items[:1])
    assert await other(TodoRead) == {"todos": []}


def write_skill(folder: Path, name: str, text: str) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


async def test_skills_discovered_listed_and_loaded(ws: Path, tmp_path: Path, run: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    project = ws / ".brute" / "skills"
    write_skill(project, "deploy", "---\ndescription: Ship it\n---\n\n# Deploy\nRun make deploy.\n")
    write_skill(project, "x", "---\nname: review\ndescription: Project review\n---\nproject body\n")
    write_skill(home / ".config/brute/skills", "review", "---\ndescription: Global review\n---\nglobal body\n")
    write_skill(home / ".config/brute/skills", "lint", "---\ndescription: Lint\n---\nlint body\n")
    skills = discover_skills(ws)
    assert [(s.name, s.description) for s in skills] == [
        ("deploy", "Ship it"), ("lint", "Lint"), ("review", "Project review")]
    prompt = skills_prompt(skills)
    assert prompt.startswith("<available_skills>\n  <skill>\n    <name>deploy</name>\n")
    loaded = await run(SkillLoad, name="deploy")
    assert loaded.startswith("# Skill: deploy\n") and loaded.endswith("# Deploy\nRun make deploy.")
    with pytest.raises(LookupError, match=r"Unknown skill 'nope'\. Available skills: deploy, lint, review"):
        await run(SkillLoad, name="nope")


def test_bad_skill_files_are_skipped_with_a_warning(ws: Path) -> None:
    project = ws / ".brute" / "skills"
    write_skill(project, "nodesc", "---\nname: x\n---\nbody\n")
    write_skill(project, "nofront", "just text\n")
    with pytest.warns(SkillWarning) as caught:
        assert discover_skills(ws) == []
    assert len(caught) == 2
