"""The loopback HTTP server under every fake: ``FakeProvider`` and the tests' own ``tests/loopback.py``.

A client hanging up is normal on the wire: a pool dropped with its connection kept alive, an interrupted turn, a
killed process. The stdlib server prints a traceback for it from the connection's thread, into the output of
whichever test runs then (issue 39 §2.16); here a hang-up ends the connection quietly and anything else is still
printed.
"""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any


class LoopbackServer(ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` with one daemon thread a connection, for which a client's hang-up is no error."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # reset, aborted, broken pipe: the client left
            return
        super().handle_error(request, client_address)
