"""What a person sees in JupyterLab: quickstart.ipynb run for real in headless Chromium.

Owns the end-to-end browser check of issue 9 §4. JupyterLab runs on 127.0.0.1 with a fresh config (its own
JUPYTER_CONFIG_DIR / DATA / RUNTIME, settings and workspace dirs under tmp, no token) rooted at a temp copy of
``notebooks/`` whose stored outputs are cleared, so everything checked was produced by this run; the repo's
notebooks are never touched. The server's PYTHONPATH starts with this checkout, so the kernel imports this
brute_nb (a cell prints ``brute_nb.__file__`` and the test checks it).

The chat widget: quickstart.ipynb has no widget cell, so the temp copy gets two more cells, one opening
``brute_nb.chat`` on its own session ``browser_chat`` that replays ``cassettes/browser_chat.jsonl``. That cassette
is recorded during setup, not committed: brute_nb's ``Recorder`` (``record=``) listens in while the real
``anthropic`` SDK talks to ``brute_nb.testing.FakeProvider`` with one scripted reply, through the same
NotebookAgent settings (no tools, a fixed system prompt) the widget uses, so the replayed request always matches
the recording and no cassette can go stale. A message typed into the widget's textarea and sent with its Send
button must come back as that reply in the widget's transcript.

Chromium is Debian's (``/usr/bin/chromium``, driven by the ``playwright`` package; never ``playwright install``);
the test skips only when it is missing (``.ci/run`` installs it). Screenshots land in ``tests/artifacts/``.
Waits are on selectors and page state with generous timeouts, never sleeps; selectors are scoped with
``:visible`` because Lab keeps hidden panels in the DOM.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
WAIT_MS = 60_000

CHAT_SESSION = "browser_chat"
CHAT_MODEL = "claude-sonnet-4-20250514"
CHAT_SYSTEM = "You are a terse assistant inside a JupyterLab browser test."
CHAT_PROMPT = "Is the median fix from the quickstart still in place?"
CHAT_REPLY = "Yes: stats.median averages the two middle values, and all four tests pass."

CHAT_CELL = f"""\
# Added by tests/browser: a chat widget on its own session, replaying a cassette recorded for the test.
chat = brute_nb.chat({CHAT_SESSION!r}, replay="cassettes/{CHAT_SESSION}.jsonl", tools="none", system={CHAT_SYSTEM!r})
chat"""
WHERE_CELL = "print(brute_nb.__file__)"

SERVER_ENV_DROPPED = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST",
                      "BRUTE_MODEL", "BRUTE_LIVE", "BRUTE_NB_DEMO", "JUPYTER_PATH", "JUPYTER_TOKEN")

LAB_FLAGS = (
    "--no-browser", "--ip=127.0.0.1", "--ServerApp.port_retries=0",
    "--IdentityProvider.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
    "--LabApp.news_url=None",
    "--ServerApp.jpserver_extensions={'jupyter_lsp': False, 'jupyter_server_terminals': False}",
)
# Quiet and quick: no news toast over the screenshots, no build check on page load, no language servers.
PAGE_CONFIG = {"buildCheck": False, "buildAvailable": False,
               "disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
# Every cell in the DOM and rendered, whatever Lab's default windowing does with cells out of view.
NOTEBOOK_SETTINGS = {"windowingMode": "none"}
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def record_chat_cassette(cassette: Path, scratch: Path) -> None:
    """Record the widget's one exchange against the fake provider, with the settings the widget cell uses."""
    from brute_nb.notebook.kernel import NotebookAgent, final_text
    from brute_nb.notebook.settings import Settings
    from brute_nb.providers.anthropic import AnthropicMessages
    from brute_nb.sync import run_sync
    from brute_nb.testing import FakeProvider

    with FakeProvider([CHAT_REPLY]) as fake:
        nb = NotebookAgent(CHAT_SESSION, scratch / f"{CHAT_SESSION}.jsonl",
                           settings=Settings(tools="none", system=CHAT_SYSTEM), notebook=scratch / "rec.ipynb")
        nb.provider = AnthropicMessages(CHAT_MODEL, base_url=fake.base_url, api_key=fake.api_key, max_retries=0,
                                        record=str(cassette))
        env = run_sync(lambda: nb.aask(CHAT_PROMPT))
    assert final_text(env["messages"]) == CHAT_REPLY
    assert cassette.is_file()


def prepare_notebooks(base: Path) -> Path:
    """A temp copy of notebooks/ with cleared outputs, the widget cells appended and the chat cassette recorded."""
    root = base / "notebooks"
    shutil.copytree(REPO / "notebooks", root, ignore=shutil.ignore_patterns(
        "scratch", "*.brute", ".ipynb_checkpoints", "*.html", "__pycache__"))
    path = root / "quickstart.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.cells += [nbformat.v4.new_code_cell(CHAT_CELL), nbformat.v4.new_code_cell(WHERE_CELL)]
    nbformat.write(nb, path)
    record_chat_cassette(root / "cassettes" / f"{CHAT_SESSION}.jsonl", base / "recording")
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SERVER_ENV_DROPPED}
    dirs = {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_DATA_DIR": "data", "JUPYTER_RUNTIME_DIR": "runtime",
            "JUPYTERLAB_SETTINGS_DIR": "lab-settings", "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
            "IPYTHONDIR": "ipython"}
    for key, name in dirs.items():
        (base / name).mkdir(parents=True, exist_ok=True)
        env[key] = str(base / name)
    (base / "config" / "labconfig").mkdir()
    (base / "config" / "labconfig" / "page_config.json").write_text(json.dumps(PAGE_CONFIG))
    tracker = base / "lab-settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps(NOTEBOOK_SETTINGS))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return env


def wait_until_serving(proc: subprocess.Popen[bytes], url: str, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        proc_wait(proc, 0.2)  # a short pause that also notices an early exit
    pytest.fail(f"JupyterLab did not answer within {timeout:.0f} s:\n{log.read_text(errors='replace')[-3000:]}")


def proc_wait(proc: subprocess.Popen[bytes], seconds: float) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(seconds)


def stop_server(proc: subprocess.Popen[bytes], url: str) -> None:
    """Ask the server to shut down (it stops its kernels), then make sure it and its kernels are gone."""
    if proc.poll() is None:
        with contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError):
            urllib.request.urlopen(urllib.request.Request(f"{url}/api/shutdown", method="POST"), timeout=10).close()
        proc_wait(proc, 20)
    if proc.poll() is None:
        os.killpg(proc.pid, 9)  # the session this test started: the server and its kernels
        proc.wait(10)


@dataclass
class Lab:
    url: str
    root: Path


@pytest.fixture(scope="module")
def chromium() -> Path:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium "
                    "fonts-noto-color-emoji; .ci/run does this). Never `playwright install`.")
    return CHROMIUM


@pytest.fixture(scope="module")
def lab(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A JupyterLab server on a free 127.0.0.1 port over the prepared notebooks."""
    base = tmp_path_factory.mktemp("lab")
    root = prepare_notebooks(base)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "jupyterlab", *LAB_FLAGS, f"--port={port}", f"--ServerApp.root_dir={root}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    log = base / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=root, env=server_env(base), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_until_serving(proc, url, log)
        yield Lab(url, root)
    finally:
        stop_server(proc, url)


@pytest.fixture(scope="module")
def page(lab: Lab, chromium: Path) -> Iterator[Any]:
    """quickstart.ipynb open in headless Chromium with all its cells run."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1280, "height": 1000})
            pg.set_default_timeout(WAIT_MS)
            try:
                run_all_cells(pg, lab)
            except BaseException:
                shot(pg, "failure")
                raise
            yield pg
        finally:
            browser.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"jupyterlab-{name}.png"))


ALL_CELLS_RAN = """([n]) => {
  const panel = [...document.querySelectorAll('.jp-NotebookPanel')].find(p => p.offsetParent !== null);
  if (!panel) return false;
  if (panel.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')) return 'error';
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
  return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent)) ? 'done' : false;
}"""


def run_all_cells(page: Any, lab: Lab) -> None:
    """Open quickstart.ipynb, wait for its kernel, then Run > Run All Cells and wait for every cell to finish."""
    n_code = sum(c.cell_type == "code" for c in nbformat.read(lab.root / "quickstart.ipynb", as_version=4).cells)
    page.goto(f"{lab.url}/lab/tree/quickstart.ipynb?reset")
    page.wait_for_selector(".jp-NotebookPanel:visible .jp-Cell")
    # The status bar says "<kernel> | Idle" once the kernel is connected; before that, Run All would ask for a
    # kernel. (The toolbar's execution indicator already reads "idle" while there is no kernel at all.)
    page.wait_for_selector(r".jp-StatusBar-TextItem:text-matches('^(?!No Kernel).+ \\| Idle$')")
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:visible:text-is('Run All Cells')")
    state = page.wait_for_function(ALL_CELLS_RAN, arg=[n_code], timeout=WAIT_MS * 2).json_value()
    if state == "error":
        error = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type*='error']")
        pytest.fail(f"a cell failed:\n{error.first.inner_text()}")


def output_of(page: Any, source_start: str) -> Any:
    """The output area of the visible code cell whose source starts with ``source_start``."""
    cell = page.locator(".jp-NotebookPanel:visible .jp-CodeCell").filter(
        has=page.locator(".jp-InputArea-editor", has_text=source_start))
    return cell.first.locator(".jp-OutputArea")


def test_kernel_imports_this_checkout(page: Any) -> None:
    printed = output_of(page, "print(brute_nb.__file__)").inner_text().strip()
    assert Path(printed).resolve().is_relative_to(REPO), printed


def test_tool_block_renders_collapsed_and_expands_on_click(page: Any) -> None:
    blocks = output_of(page, "The tests in this project fail").locator("details.brute-tool:visible")
    shell = blocks.filter(has=page.locator("summary", has_text="python3 run_tests.py")).first
    shell.scroll_into_view_if_needed()
    result = shell.locator("pre", has_text="FAIL test_median_even")
    assert shell.get_attribute("open") is None
    assert not result.is_visible()
    shot(page, "tool-collapsed")
    shell.locator("summary").click()
    result.wait_for(state="visible")
    assert shell.get_attribute("open") is not None
    assert "1 failed" in result.inner_text()
    shot(page, "tool-expanded")


def test_log_dataframe_renders_as_a_table(page: Any) -> None:
    table = output_of(page, "df = brute_nb.current().df").locator("table.dataframe:visible")
    table.wait_for()
    headers = table.locator("thead th").all_inner_texts()
    assert {"turn", "role", "tool_names", "n_tool_calls"} <= set(headers), headers
    roles = table.locator("tbody tr td:nth-child(3)").all_inner_texts()
    assert {"user", "assistant", "tool"} <= set(roles), roles


def test_chat_widget_sends_and_shows_the_replayed_reply(page: Any) -> None:
    widget = output_of(page, "# Added by tests/browser").locator(".jupyter-widgets:visible").first
    widget.wait_for()
    box = widget.locator("textarea:visible")
    box.fill(CHAT_PROMPT)
    widget.locator("button:visible", has_text="Send").click()
    transcript = widget.locator(".brute-chat")
    transcript.locator(".brute-text", has_text=CHAT_REPLY).wait_for()
    assert CHAT_PROMPT in transcript.locator(".brute-user").inner_text()
    assert "replayed" in transcript.locator(".brute-footer").inner_text()
    assert box.input_value() == ""
    widget.scroll_into_view_if_needed()
    shot(page, "chat-reply")
