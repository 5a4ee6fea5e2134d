"""Retry-After as seconds, milliseconds or an HTTP date (RFC 9110), read one way by the provider's error and map's
limiter; the dates come over the wire from the fake server to the real SDK clients."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2
import pytest

from brute_nb.errors import ProviderError
from brute_nb.map.limiter import retry_after
from brute_nb.retry_after import seconds
from brute_nb.testing import FakeProvider
from brute_nb.testing.script import Fault

from .helpers import FACTORIES, tool_agent

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("headers", "wait"), [
    ({"retry-after": "7"}, 7.0),
    ({"retry-after": "1.5"}, 1.5),
    ({"retry-after": "7", "retry-after-ms": "250"}, 0.25),  # OpenAI's milliseconds are the finer answer
    ({"retry-after": "Tue, 01 Dec 2026 12:00:30 GMT"}, 30.0),  # IMF-fixdate
    ({"retry-after": "Tuesday, 01-Dec-26 12:01:00 GMT"}, 60.0),  # RFC 850, which recipients must still accept
    ({"retry-after": "Tue Dec  1 12:00:05 2026"}, 5.0),  # asctime: no zone, GMT
    ({"retry-after": "Tue, 01 Dec 2026 11:59:00 GMT"}, 0.0),  # already past: no wait
    ({"retry-after": "Tue, 01 Dec 2026 12:00:30 GMT", "date": "Tue, 01 Dec 2026 12:00:20 GMT"}, 10.0),  # server clock
    ({"retry-after": "-3"}, 0.0),
    ({"retry-after": "soon"}, None),
    ({"retry-after": "nan"}, None),
    ({"retry-after": ""}, None),
    ({}, None),
])
def test_every_form_rfc_9110_allows(headers: dict[str, str], wait: float | None) -> None:
    assert seconds(headers, now=NOW) == wait


def test_httpx_headers_are_read_whatever_their_case() -> None:
    assert seconds(httpx2.Headers({"Retry-After": "Tue, 01 Dec 2026 12:00:09 GMT"}), now=NOW) == 9.0


def http_date_in(delay: float) -> str:
    return format_datetime(datetime.now(UTC) + timedelta(seconds=delay), usegmt=True)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", sorted(FACTORIES))
async def test_a_429_with_an_http_date_reaches_the_error_and_the_limiter(fake_provider: FakeProvider,
                                                                         kind: str) -> None:
    started = time.monotonic()
    fake_provider.add(Fault("rate_limit", status=429, message="slow down",
                            headers={"retry-after": http_date_in(30)}))
    with pytest.raises(ProviderError) as info:
        await tool_agent(FACTORIES[kind](fake_provider)).astart("go")
    # The date says 30 s from when it was written; the wait is counted from the response's Date (whole seconds).
    least = 30 - (time.monotonic() - started) - 1
    said = re.search(r"retry after ([\d.]+) s", str(info.value))
    assert said is not None and least <= float(said.group(1)) <= 31, str(info.value)
    wait = retry_after(info.value)  # what brute_nb.map's limiter holds every row for
    assert wait is not None and least <= wait <= 31
