"""Fixtures for the tool tests: a workspace folder as the root, and overflow files kept inside tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brute_nb.tools import Adapter, use_env


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def overflow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "overflow"
    monkeypatch.setenv("BRUTE_NB_OVERFLOW_DIR", str(folder))
    return folder


class Runner:
    """Calls a tool the way the pipeline does (adapter + env), returning its raw result."""

    def __init__(self, env: dict[str, Any]) -> None:
        self.env = env

    async def __call__(self, tool: Any, **arguments: Any) -> Any:
        with use_env(self.env):
            return await Adapter.wrap(tool).call(arguments)


@pytest.fixture
def run(env: dict[str, Any]) -> Runner:
    return Runner(env)
