"""Two real kernels on one session file (issue 8's fault suite): while one kernel's turn holds the file, the
other's ``%%brute`` fails with a clear error naming the file, nothing interleaves, and once the first turn ends the
second kernel continues from the whole conversation.

The first turn is held open by a real shell command that waits for a file the test creates (no sleeps).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import kernel, ok, run, shown
from notebook_helpers import HOLD, wait_for

pytestmark = pytest.mark.kernel

SETUP = """
import brute_nb
from brute_nb.testing.scripted import Scripted, call, reply
brute_nb.configure(notebook="demo.ipynb", approve="shell=allow")
brute_nb.current().provider = model = Scripted({script})
"""


@pytest.fixture
def kernels(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    with kernel(tmp_path) as (_, first), kernel(tmp_path) as (_, second):
        yield first, second


def test_a_second_kernel_is_refused_while_the_first_holds_the_session(kernels: tuple[Any, Any],
                                                                      tmp_path: Path) -> None:
    first, second = kernels
    for kc in (first, second):
        ok(kc, "%load_ext brute_nb")
    ok(first, SETUP.format(script=f'[reply("Holding.", call("shell", {{"command": {HOLD!r}}})), "A done."]'))
    ok(second, SETUP.format(script='["B here."]'))

    held = first.execute("%%brute\nhold the session")
    # the first kernel's turn is inside its tool call, holding the file lock
    wait_for((tmp_path / "entered").exists, "the first kernel's tool to start")
    reply, _ = run(second, "%%brute\nme too")
    assert reply["status"] == "error" and reply["ename"] == "SessionLockedError", reply
    assert "default.jsonl" in reply["evalue"] and "another" in reply["evalue"]

    (tmp_path / "gate").touch()
    while True:  # the first kernel's turn ends normally
        msg = first.get_shell_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == held:
            assert msg["content"]["status"] == "ok"
            break

    outputs = ok(second, "%%brute\nme too, now")
    assert any("B here." in c["data"].get("text/plain", "") for c in shown(outputs))
    sent = ok(second, "print([m['content'] for m in model.requests[-1]['messages'][1:]])")
    lines = [json.loads(line) for line in (tmp_path / "demo.brute" / "default.jsonl").read_text().splitlines()]
    assert [(m["role"], m["content"][:12]) for m in lines] == [
        ("user", "hold the ses"), ("assistant", "Holding."), ("tool", "released\n"), ("assistant", "A done."),
        ("user", "me too, now"), ("assistant", "B here."),
    ]  # the refused turn wrote nothing; the whole first turn, then the second kernel's
    assert "hold the session" in sent[0]["content"]["text"]  # the second kernel saw the first one's turn
