"""Driving a real kernel from a test: start one on this source tree, run a cell, read what it showed.

The kernel gets ``PYTHONPATH`` set to this checkout, so it imports the brute_nb under test rather than whatever
the venv has installed.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

Output = dict[str, Any]


@contextmanager
def kernel(cwd: Path, **env: str) -> Iterator[tuple[Any, Any]]:
    """A started kernel (manager, client) in ``cwd`` with extra environment variables; shut down after."""
    from jupyter_client.manager import start_new_kernel

    from brute_nb.providers import profiles

    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    # A kernel chooses its model from the environment and the stored keys alone; what an earlier test in this worker
    # left in os.environ or in the shared config folder must not choose one for it (CI saw %load_ext import anyio
    # because a key was inherited and the warm-up started). A test that wants a model passes it in ``env``.
    chosen = {"BRUTE_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL",
              *(v for p in profiles.builtin() for v in p.chosen_by)}
    inherited = {k: v for k, v in os.environ.items() if k not in chosen}
    config = tempfile.mkdtemp(prefix="brute-nb-kernel-config-")
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(cwd),
                              env={**inherited, "XDG_CONFIG_HOME": config, "PYTHONPATH": path, **env})
    try:
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run(kc: Any, code: str, timeout: float = 60,
        on_output: Callable[[Output], Any] | None = None) -> tuple[dict[str, Any], list[Output]]:
    """Execute ``code``; return the execute_reply content and the cell's output messages, in order."""
    msg_id = kc.execute(code)
    outputs = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind in ("display_data", "execute_result", "stream", "error", "update_display_data"):
            outputs.append(msg)
            if on_output is not None:
                on_output(msg)
        elif kind == "comm_msg" and on_output is not None:  # the live view's appended text (notebook/views/live.py)
            on_output(msg)
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            break
    while True:  # the reply to this cell (skipping replies to cells an earlier failure left behind)
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"], outputs


def ok(kc: Any, code: str, **kw: Any) -> list[Output]:
    """Run a cell that must succeed; its outputs."""
    reply, outputs = run(kc, code, **kw)
    assert reply["status"] == "ok", f"{code!r} failed: {reply.get('ename')}: {reply.get('evalue')}"
    return outputs


def on_screen(msg: Output) -> str:
    """What an output message puts on screen as HTML: a display's ``text/html``, or what a message to the live
    widget (``notebook/views/live.py``) adds: tool rows and rendered blocks as HTML, appended text as text."""
    data = msg["content"].get("data", {})
    if msg["msg_type"] != "comm_msg":
        return str(data.get("text/html", ""))
    return "".join(str(op.get("h", "")) + str(op.get("b", "")) + str(op.get("t", op.get("a", "")))
                   for op in live_ops(msg))


def live_ops(msg: Output) -> list[dict[str, Any]]:
    """The operations a message to the live widget carries (``live.message``): ``{"o": [...]}``, or the appended
    text alone as a JSON string (an append to the segment addressed last, whose index the message leaves out)."""
    content = msg["content"].get("data", {}).get("content")
    if isinstance(content, str):
        return [{"a": content}]
    return list((content or {}).get("o") or [])


def shown(outputs: list[Output]) -> list[Output]:
    """The final (display_data / execute_result) outputs' content: data and metadata."""
    return [o["content"] for o in outputs if o["msg_type"] in ("display_data", "execute_result")]


def html_of(outputs: list[Output]) -> str:
    return "".join(c.get("data", {}).get("text/html", "") for c in shown(outputs))


def text_of(outputs: list[Output]) -> str:
    """What the cell printed (stream output)."""
    return "".join(o["content"]["text"] for o in outputs if o["msg_type"] == "stream")


def value_of(kc: Any, expr: str) -> Any:
    """A Python value from the kernel, through its repr (``expr`` must evaluate to a literal)."""
    import ast

    text = text_of(ok(kc, f"print(repr({expr}))"))
    return ast.literal_eval(text.strip())

