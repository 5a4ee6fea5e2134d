"""``shell``: ``bash -c <command>`` in its own process group, inside the workspace root.

stdin is closed (``/dev/null``), stdout and stderr are captured separately. The whole process group is killed
with SIGKILL when the command times out (300 s by default), when the turn is cancelled, and when bash itself
exits (so a leftover ``cmd &`` cannot hold the pipes open; start a daemon with ``setsid`` to keep it). Partial
output is kept on timeout. The result is tail-truncated (the end of a log is what matters) and an exit code or a
signal is reported; exit 0 adds nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import Any, ClassVar

import anyio
from anyio.abc import ByteReceiveStream, Process

from brute_nb.tools.builtin.fs_common import WorkspaceTool
from brute_nb.tools.truncation import ToolOutput, truncate

DEFAULT_TIMEOUT = 300


class Shell(WorkspaceTool):
    name = "shell"
    description = (
        "Run a bash command in the workspace root (or cwd) and return its stdout, then STDERR and a non-zero exit "
        f"code. No stdin, no TTY. Times out after {DEFAULT_TIMEOUT} s by default (the command and everything it "
        "started are killed). Long output keeps its last 2000 lines / 50 KB."
    )
    params: ClassVar[dict[str, Any]] = {
        "command": {"type": "string", "desc": "The bash command to run", "required": True},
        "cwd": {"type": "string", "desc": "Working directory (default: the workspace root)"},
        "timeout": {"type": "integer", "desc": f"Seconds before the command is killed (default {DEFAULT_TIMEOUT})"},
    }
    risk = "shell"

    # ``timeout`` is the model-facing parameter name (Brute's); it is enforced below with move_on_after.
    async def execute(self, command: str, cwd: str | None = None,
                      timeout: int | None = None) -> ToolOutput:  # noqa: ASYNC109
        folder = self.path(cwd or ".")
        if not folder.is_dir():
            raise NotADirectoryError(f"Directory not found: {folder}")
        seconds = timeout if timeout is not None and timeout > 0 else DEFAULT_TIMEOUT
        out, err, code, timed_out = await run_command(command, str(folder), seconds)
        text = out.decode("utf-8", errors="replace")
        if err:
            text += "\nSTDERR:\n" + err.decode("utf-8", errors="replace")
        if timed_out:
            text += f"\n[Command timed out after {seconds}s and was killed: {command}]"
        elif code is not None and code < 0:
            text += f"\n[killed by signal {-code} ({_signal_name(-code)})]"
        elif code:
            text += f"\n[exit code: {code}]"
        return truncate(text, direction="tail")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def kill_group(process: Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _drain(stream: ByteReceiveStream | None, into: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        into.extend(chunk)


async def run_command(command: str, cwd: str, seconds: float) -> tuple[bytes, bytes, int | None, bool]:
    """``(stdout, stderr, returncode, timed_out)``; the process group never outlives this call."""
    process = await anyio.open_process(["bash", "-c", command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, cwd=cwd, start_new_session=True)
    out, err = bytearray(), bytearray()
    try:
        with anyio.move_on_after(seconds) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(_drain, process.stdout, out)
                group.start_soon(_drain, process.stderr, err)
                await process.wait()
                kill_group(process)
    finally:
        # Shielded: a cancelled turn must still kill and reap the command, never leave it running.
        with anyio.CancelScope(shield=True):
            kill_group(process)
            await process.wait()
            await process.aclose()
    return bytes(out), bytes(err), process.returncode, scope.cancelled_caught
