"""What the test suite itself keeps (issue 26 item 8): one loopback HTTP server, and a fast loop that needs no kernel.

Read from the sources and the README, so a test file that starts its own server, or a fast-loop folder that grows
a kernel test, fails here rather than going unnoticed until the suite is slow or flaky again.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"

SERVERS = {"HTTPServer", "ThreadingHTTPServer", "TCPServer", "ThreadingTCPServer", "serve_forever", "start_server",
           "create_server"}
"""What starts a server in-process: the stdlib's server classes, a serve loop, asyncio's servers."""
KERNELS = ("jupyter_client", "nbclient", "nbformat", "playwright", "tests.notebook.kernel_helpers",
           "tests.browser")
"""What a test needs to drive a real kernel or a browser: none of it belongs in the fast loop."""


def _names(path: Path) -> set[str]:
    """Every name and attribute ``path`` uses, and every module it imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(a.name for a in node.names)
    return found


def test_one_loopback_server_serves_the_tests() -> None:
    """``tests/loopback.py`` (keep-alive, a length on every reply, every request counted) is the one web server the
    tests start in-process; a model API is ``brute_nb.testing.FakeProvider``."""
    own = {str(p.relative_to(ROOT)): sorted(_names(p) & SERVERS) for p in sorted(TESTS.rglob("*.py"))
           if p.name != "loopback.py"}
    assert {path: used for path, used in own.items() if used} == {}, "serve it with tests.loopback.serve"
    assert _names(TESTS / "loopback.py") & SERVERS  # the scan sees a server where there is one


def fast_loop() -> str:
    readme = (ROOT / "README.md").read_text()
    found = re.findall(r"^While you change the core, a fast loop.*?```bash\n(.*?)\n```", readme, flags=re.S | re.M)
    assert len(found) == 1, "README documents the fast loop once, after 'While you change the core, a fast loop'"
    return found[0]


def test_the_documented_fast_loop_runs_folders_that_exist_with_registered_markers() -> None:
    command = fast_loop()
    folders = re.findall(r"\btests/\S+", command)
    assert folders and all((ROOT / f).is_dir() for f in folders), folders
    markers = {m.split(":")[0] for m in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"]["markers"]}
    expression = re.search(r'-m "([^"]+)"', command)
    assert expression is not None
    assert set(re.findall(r"not (\w+)", expression.group(1))) == markers  # every slow kind is left out


def test_the_fast_loop_drives_no_kernel_and_no_browser() -> None:
    """The fast loop's folders hold no test that needs a kernel or a browser, marked or not: it stays about a
    minute because nothing in it starts a process that takes seconds to come up."""
    needs = {}
    for folder in re.findall(r"\btests/\S+", fast_loop()):
        for path in sorted((ROOT / folder).rglob("*.py")):
            used = sorted(n for n in _names(path) if n.startswith(KERNELS))
            if used:
                needs[str(path.relative_to(ROOT))] = used
    assert needs == {}
