"""What a stdio MCP server leaves behind: its stderr, kept as a bounded tail, and the processes it started.

* **Stderr.** ``StderrTail`` is a pipe the server writes its stderr into, drained by a daemon thread that keeps
  only the last ``TAIL_BYTES``: a server that floods stderr costs that much memory, never a growing file, and it
  never blocks on a full pipe. The tail is what a crash or a hang reports.
* **Its processes.** The SDK starts each server in a new session (its own process group) and, when asked to stop,
  closes its stdin; a server that exits on that EOF is not killed, so whatever it started (a worker, a browser, a
  language server) would outlive the kernel. Each server therefore gets a ``MARKER`` variable with a token of its
  own, which every process it starts inherits (in its group or escaped from it), and ``end_tree`` ends every
  process carrying the token: SIGTERM, then SIGKILL after a grace period.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from typing import TextIO

MARKER = "BRUTE_NB_MCP_SERVER"
TAIL_BYTES = 64 << 10
GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL for what a stopped server left running."""


def token() -> str:
    """A token for one server's ``MARKER``: how its processes are found again when it stops."""
    return secrets.token_hex(8)


class StderrTail:
    """The last ``limit`` bytes a server wrote to its stderr."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self.limit = limit
        read, write = os.pipe()
        self._read = read
        self.file: TextIO = os.fdopen(write, "w", encoding="utf-8", errors="replace")
        """What the server is started with as its stderr (a real descriptor, as a subprocess needs)."""
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="mcp-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._read, 1 << 16):
                with self._lock:
                    self._tail += chunk
                    if len(self._tail) > self.limit:
                        del self._tail[: len(self._tail) - self.limit]
        finally:
            os.close(self._read)

    def release(self) -> None:
        """Close this process's copy of the write end once the server has its own: the drain then ends when the
        last process holding it does."""
        with contextlib.suppress(OSError):
            self.file.close()

    def text(self, settle: float = 0.0) -> str:
        """The tail as text; after ``release``, first waits up to ``settle`` seconds for the writers to be gone
        (a server that crashed: its last lines may still be in the pipe)."""
        if settle and self.file.closed:
            self._thread.join(settle)
        with self._lock:
            return self._tail.decode("utf-8", errors="replace")

    def held(self) -> int:
        """Bytes kept now (at most ``limit``)."""
        with self._lock:
            return len(self._tail)


def end_tree(marker: str, grace: float = GRACE) -> int:
    """End every process whose environment carries ``MARKER=marker``; how many there were."""
    import psutil  # type: ignore[import-untyped]

    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if process.environ().get(MARKER) == marker and process.pid != os.getpid():
                found.append(process)
    for process in found:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, alive = psutil.wait_procs(found, timeout=grace)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=grace)
    return len(found)
