"""fetch refuses loopback, private, link-local and metadata destinations (issue 14 item 4), and reads capped bodies.

Every server here is on 127.0.0.1 and every other destination is refused before a connection is made (or, for a
name, at the connection), so no test reaches the network.
"""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest

from brute_nb.tools import Fetch, use_env
from brute_nb.tools.builtin.fetch_guard import BlockedDestinationError, Guard
from tests.loopback import Handler, serve

pytestmark = pytest.mark.anyio


class Server:
    """A loopback HTTP server (``tests.loopback``) whose ``routes`` map a path to (status, headers, body)."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        server = self

        class Routes(Handler):
            def do_GET(self) -> None:
                if self.path == "/endless":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Connection", "close")  # no length: the body ends when the connection does
                    self.end_headers()
                    try:
                        while True:  # a body with no end: only a reader that stops survives it
                            self.wfile.write(b"z" * 65536)
                    except OSError:
                        return
                status, headers, body = server.routes.get(self.path, (200, {}, b"local secret"))
                self.send(status, body, headers)

        self.handler = Routes

    @contextmanager
    def running(self) -> Iterator[Server]:
        with serve(self.handler) as loopback:
            self.loopback = loopback
            yield self

    @property
    def hits(self) -> list[str]:
        return self.loopback.paths

    @property
    def port(self) -> int:
        return self.loopback.port

    @property
    def url(self) -> str:
        return self.loopback.url


@pytest.fixture
def server() -> Iterator[Server]:
    with Server().running() as s:
        yield s


async def call(tool: Fetch, url: str) -> Any:
    with use_env({"state": {}, "root": None, "ask": None, "events": None, "metadata": {}}):
        return await tool.execute(url=url)


@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://2852039166/",
    "http://0xa9fea9fe/",
    "http://10.0.0.1/",
    "http://192.168.1.1/",
    "http://100.100.100.200/",
    "http://[::ffff:169.254.169.254]/",
    "http://127.0.0.1:8888/api/kernels",
    "http://[::1]/",
    "http://0.0.0.0:8888/",
])
async def test_non_public_destinations_are_refused(url: str) -> None:
    def never(request: httpx2.Request) -> httpx2.Response:
        raise AssertionError(f"a request left for {request.url}")

    for tool in (Fetch(), Fetch(transport=httpx2.MockTransport(never))):
        with pytest.raises(BlockedDestinationError, match="Refused to fetch"):
            await call(tool, url)


async def test_the_connected_address_is_checked_not_the_name(server: Server) -> None:
    # "localhost" is no literal address: only the check of the connection's peer can catch it.
    with pytest.raises(BlockedDestinationError, match=r"localhost \(127\.0\.0\.1\): a loopback address"):
        await call(Fetch(), f"http://localhost:{server.port}/")
    assert server.hits == []  # refused once connected, before the request was written


async def test_an_allowed_local_server_is_reached_and_only_on_its_port(server: Server) -> None:
    out = await call(Fetch(allow=[f"127.0.0.1:{server.port}"]), f"http://localhost:{server.port}/")
    assert out == "HTTP 200 (no content type)\n\nlocal secret"
    with pytest.raises(BlockedDestinationError):
        await call(Fetch(allow=["127.0.0.1:1"]), f"{server.url}/")
    assert server.hits == ["/"]


async def test_every_redirect_hop_is_checked(server: Server) -> None:
    server.routes["/to-metadata"] = (302, {"Location": "http://169.254.169.254/latest/meta-data/"}, b"")
    server.routes["/to-name"] = (302, {"Location": "http://metadata.google.internal/"}, b"")
    tool = Fetch(allow=[f"127.0.0.1:{server.port}"])
    for path in ("/to-metadata", "/to-name"):
        with pytest.raises(BlockedDestinationError):
            await call(tool, server.url + path)

    # A public URL that redirects to the metadata address (the public hop answered by a mock transport).
    def public(request: httpx2.Request) -> httpx2.Response:
        if request.url.host == "example.test":
            return httpx2.Response(302, headers={"location": "http://169.254.169.254/"})
        raise AssertionError(f"a request left for {request.url}")

    with pytest.raises(BlockedDestinationError, match=r"169\.254\.169\.254"):
        await call(Fetch(transport=httpx2.MockTransport(public)), "http://example.test/")


async def test_a_redirect_to_another_local_port_is_refused_at_the_connection(server: Server) -> None:
    with Server().running() as jupyter:  # stands in for the Jupyter server on the same machine
        server.routes["/hop"] = (302, {"Location": f"http://localhost:{jupyter.port}/api/kernels"}, b"")
        with pytest.raises(BlockedDestinationError, match="loopback"):
            await call(Fetch(allow=[f"127.0.0.1:{server.port}"]), server.url + "/hop")
        assert server.hits == ["/hop"] and jupyter.hits == []


async def test_an_endless_body_is_read_only_up_to_the_cap(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.tools.builtin import fetch

    monkeypatch.setattr(fetch, "MAX_BODY_BYTES", 1_000_000)
    out = await call(Fetch(allow=[f"127.0.0.1:{server.port}"]), server.url + "/endless")
    assert out.startswith("HTTP 200 text/plain\n\nzzz") and out.endswith("\n...(truncated)")
    assert len(out) < fetch.MAX_CHARS + 100


async def test_a_compressed_bomb_is_inflated_only_up_to_the_cap(server: Server,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.tools.builtin import fetch

    monkeypatch.setattr(fetch, "MAX_BODY_BYTES", 1_000_000)
    bomb = gzip.compress(b"b" * (64 << 20), compresslevel=9)  # 64 MiB in about 64 KB
    server.routes["/bomb"] = (200, {"Content-Type": "text/plain", "Content-Encoding": "gzip"}, bomb)
    tracemalloc.start()
    try:
        out = await call(Fetch(allow=[f"127.0.0.1:{server.port}"]), server.url + "/bomb")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.endswith("b" * 10 + "\n...(truncated)")
    assert peak < 32 << 20, f"fetching 1 MB of a 64 MiB gzip body peaked at {peak / 2**20:.0f} MiB"


def test_allow_list_entries_are_checked_when_the_tool_is_built() -> None:
    with pytest.raises(ValueError, match=r"not 'localhost:80', 'nonsense'"):
        Fetch(allow=["127.0.0.1", "[::1]:8080", "10.0.0.0/8", "fd00::/8", "localhost:80", "nonsense"])
    guard = Guard(["10.0.0.0/8", "[::1]:8080"])
    import ipaddress

    assert guard.allowed(ipaddress.ip_address("10.1.2.3"), 443)
    assert guard.allowed(ipaddress.ip_address("::1"), 8080) and not guard.allowed(ipaddress.ip_address("::1"), 80)
    assert not guard.allowed(ipaddress.ip_address("169.254.169.254"), 80)
    assert guard.allowed(ipaddress.ip_address("93.184.215.14"), 80)
