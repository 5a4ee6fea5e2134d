"""The one loopback HTTP server the tests start when they need a web server that is not a model API.

(A model API is ``brute_nb.testing.FakeProvider``.) Honest about the wire as real servers are: HTTP/1.1 keep-alive
unless a handler says otherwise, a ``Content-Length`` on every reply (``send``), every request counted with its
headers, one thread a connection, and shut down and closed when the test ends.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import psutil

from brute_nb.testing.server import LoopbackServer


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: Mapping[str, str]


class Loopback(LoopbackServer):
    """A started server on 127.0.0.1 and a free port; ``requests`` lists every request it read, in order (a
    client's hang-up is no error: ``LoopbackServer``)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.requests: list[Request] = []
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def paths(self) -> list[str]:
        return [r.path for r in self.requests]


class Handler(BaseHTTPRequestHandler):
    """A handler that speaks HTTP/1.1 keep-alive; subclasses write ``do_GET``/``do_POST`` with ``send``."""

    protocol_version = "HTTP/1.1"
    server: Loopback

    def parse_request(self) -> bool:
        ok = super().parse_request()
        if ok:
            with self.server.lock:
                self.server.requests.append(Request(self.command, self.path, dict(self.headers)))
        return ok

    def send(self, status: int, body: bytes = b"", headers: Mapping[str, str] | None = None) -> None:
        """One whole reply: status, headers (a ``Content-Length`` always, so a kept-alive connection stays usable)."""
        self.send_response(status)
        for key, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: pytest shows a failing test's own output, not the server's access log."""


@contextmanager
def serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[Loopback]:
    """A ``Loopback`` serving ``handler`` on a thread for the ``with`` block."""
    server = Loopback(handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def free_port() -> int:
    """A port nothing listens on now (bound, read, closed): for a server this test starts in another process, or
    for an address that must refuse connections."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def open_to(port: int) -> int:
    """This process's established TCP connections to ``port``: the client's side of a kept-alive pool, counted where
    a test checks that a client closed its connections."""
    me = psutil.Process()
    # psutil 6.0 renamed Process.connections to net_connections and warns on the old name (an error under the suite's
    # warnings-as-errors); the declared psutil 5.9 has only the old one, and brute_nb itself needs no more than 5.9.
    listing = getattr(me, "net_connections", None) or me.connections
    return sum(1 for c in listing(kind="tcp")
               if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED)
