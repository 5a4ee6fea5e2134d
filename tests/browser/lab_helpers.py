"""Shared pieces of the browser tests: JupyterLab's flags and fresh config, and helpers that drive a page.

The server and browser fixtures live in ``conftest.py`` (one JupyterLab and one Chromium for the whole run); this
module holds what both the fixtures and the test modules call. Waits are on selectors and page state with generous
timeouts, never sleeps; selectors are scoped with ``:visible`` because Lab keeps hidden panels in the DOM.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
WAIT_MS = 60_000
EXECUTION_COUNT = re.compile(r"\[\d+\]")

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


@dataclass
class Lab:
    """A running JupyterLab: its URL, the folder it serves, and the fake provider its kernels talk to."""

    url: str
    root: Path
    fake: Any


def server_env(base: Path, extra: dict[str, str]) -> dict[str, str]:
    """This process's environment minus any provider settings, with fresh Jupyter dirs under ``base``."""
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
    return {**env, **extra}


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


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def open_notebook(page: Any, lab: Lab, name: str) -> None:
    """Open ``name`` with a fresh layout and wait until its kernel is connected and idle."""
    page.goto(f"{lab.url}/lab/tree/{name}?reset")
    page.wait_for_selector(".jp-NotebookPanel:visible .jp-Cell")
    # The status bar says "<kernel> | Idle" once the kernel is connected; before that, running a cell would ask
    # for a kernel. (The toolbar's execution indicator already reads "idle" while there is no kernel at all.)
    page.wait_for_selector(KERNEL_IDLE)


KERNEL_IDLE = r".jp-StatusBar-TextItem:text-matches('^(?!No Kernel).+ \\| Idle$')"


def code_cell(page: Any, source_part: str) -> Any:
    """The visible code cell whose source contains ``source_part`` (first match)."""
    return page.locator(".jp-NotebookPanel:visible .jp-CodeCell").filter(
        has=page.locator(".jp-InputArea-editor", has_text=source_part)).first


def output_of(page: Any, source_part: str) -> Any:
    """The output area of the visible code cell whose source contains ``source_part``."""
    return code_cell(page, source_part).locator(".jp-OutputArea")


def prompt_of(cell: Any) -> str:
    return str(cell.locator(".jp-InputArea-prompt").inner_text()).strip()


def select_cell(page: Any, source_part: str) -> Any:
    """Click into the cell's editor (so it is the active cell) and return the cell."""
    cell = code_cell(page, source_part)
    cell.scroll_into_view_if_needed()
    cell.locator(".jp-InputArea-editor").click()
    return cell


def run_cell(page: Any, source_part: str) -> Any:
    """Run one cell with Shift+Enter (as a person would) and return it; the caller waits for what it expects."""
    cell = select_cell(page, source_part)
    page.keyboard.press("Shift+Enter")
    return cell


def wait_ran(cell: Any, timeout: float = WAIT_MS) -> None:
    """Wait until the cell's prompt shows an execution count (``[3]``), i.e. it finished."""
    cell.locator(".jp-InputArea-prompt").filter(has_text=EXECUTION_COUNT).wait_for(timeout=timeout)



HEARD = ("from brute_nb.notebook.kernel_tools import cell_bridge\n"
         "print('document answered:', cell_bridge.live(cell_bridge._bridge) is not None)")
"""A cell that says whether the kernel has heard the notebook's document through the cell tools' bridge."""


def wait_heard(page: Any, tries: int = 120) -> None:
    """Run the ``HEARD`` cell until the kernel has heard the open notebook's cells: the bridge is made off the
    load path and its first answer reaches the kernel between cells, so a test that edits the live document waits
    for that as a person's next cell usually does (a cell run too soon changes the saved file, and says so)."""
    for _ in range(tries):
        cell = run_cell(page, "document answered")
        wait_ran(cell)
        out = output_of(page, "document answered")
        out.locator("text=document answered:").wait_for()
        if "document answered: True" in out.inner_text():
            return
        page.wait_for_timeout(250)
    raise AssertionError("the kernel never heard the notebook's document through the cell bridge")


def session_lines(path: Path) -> list[dict[str, Any]]:
    """A session file's lines as the JSON they hold."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def read_saving(path: Path) -> Any:
    """The notebook at ``path``, or None while Jupyter Server is still writing it.

    The server's save is not atomic for a reader (it writes the file in place), so a poll that reads during a save
    can see an empty or half-written file; the caller polls again.
    """
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except (json.JSONDecodeError, nbformat.reader.NotJSONError):
        return None


def write_notebook(path: Path, cells: tuple[str, ...]) -> None:
    """A notebook of code cells (unrun) with the default Python kernel, as a user would have saved it."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, path)


@contextlib.contextmanager
def notebook_page(lab: Lab, browser: Any, name: str, cells: tuple[str, ...],
                  watch: Callable[[Any], None] | None = None) -> Iterator[Any]:
    """``name`` written with ``cells``, open in a new page with ``%load_ext brute_nb`` run (its first cell must
    hold it); ``watch`` sees the page before it loads anything. A failure to get there leaves a screenshot."""
    write_notebook(lab.root / name, cells)
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(WAIT_MS)
    try:
        if watch is not None:
            watch(page)
        try:
            open_notebook(page, lab, name)
            wait_ran(run_cell(page, "%load_ext brute_nb"))
        except BaseException:
            shot(page, f"{Path(name).stem}-failure")
            raise
        yield page
    finally:
        page.close()
