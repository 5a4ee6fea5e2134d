"""One JupyterLab server and one headless Chromium for every browser test module.

The server runs on 127.0.0.1 with a fresh config (its own JUPYTER_CONFIG_DIR / DATA / RUNTIME, settings and
workspace dirs under tmp, no token), rooted at a temp copy of ``notebooks/`` that each module adds its own
notebooks to; the repo's notebooks are never touched. The server's PYTHONPATH starts with this checkout, so kernels
import this brute_nb. Its kernels reach a ``brute_nb.testing.FakeProvider`` running in the test process through
``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY``: a module scripts a reply with ``lab.fake.add(...)`` just before it
makes the kernel ask for one (notebooks that replay a cassette never reach it).

Chromium is Debian's (``/usr/bin/chromium``, driven by the ``playwright`` package; never ``playwright install``);
the tests skip only when it is missing (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LAB_FLAGS,
    REPO,
    Lab,
    server_env,
    stop_server,
    wait_until_serving,
)

from brute_nb.testing import FakeProvider
from tests.loopback import free_port


@pytest.fixture(scope="session")
def chromium() -> Path:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium "
                    "fonts-noto-color-emoji; .ci/run does this). Never `playwright install`.")
    return CHROMIUM


@pytest.fixture(scope="session")
def lab(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A JupyterLab server on a free 127.0.0.1 port over a temp copy of ``notebooks/``."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(REPO / "notebooks", root, ignore=shutil.ignore_patterns(
        "scratch", "*.brute", ".ipynb_checkpoints", "*.html", "__pycache__"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "jupyterlab", *LAB_FLAGS, f"--port={port}", f"--ServerApp.root_dir={root}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    log = base / "server.log"
    with FakeProvider() as fake:
        env = server_env(base, {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": str(fake.api_key)})
        with log.open("wb") as out:
            proc = subprocess.Popen(args, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        try:
            wait_until_serving(proc, url, log)
            yield Lab(url, root, fake)
        finally:
            stop_server(proc, url)


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Any]:
    """Headless Chromium, one per module (each opens its own page).

    Module scope, not session: playwright's sync API keeps an asyncio loop running in this thread while it is
    open, and the tests collected after tests/browser call ``anyio.run`` in this thread.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(autouse=True)
def _own_script(request: pytest.FixtureRequest) -> None:
    """Each test scripts the replies it needs on the session's one fake provider: what an earlier test scripted and
    its page never asked for (a turn the test did not wait for) must not answer the next test's prompt."""
    if "lab" in request.fixturenames:
        request.getfixturevalue("lab").fake.script.clear()
