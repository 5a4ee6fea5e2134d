"""Shared fixtures. Async tests run on asyncio through anyio's pytest plugin."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fake_provider():  # type: ignore[no-untyped-def]
    """A running loopback FakeProvider (OpenAI chat, Responses and Anthropic); script it with ``.add(...)``."""
    from brute_nb.testing import FakeProvider

    with FakeProvider() as fake:
        yield fake
