"""The fake server's stream paced like a real model's: the benchmarks that time chunk -> screen share it.

``pace`` wraps a ``FakeProvider``'s responses so each chunk that carries reply text is written ``gap`` seconds
after the one before, and stamps every chunk just before it goes out, so the latency measured runs from the moment
a real model's chunk would leave the server.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def pace(fake: Any, sent: list[tuple[float, str]], gap: float, text_of: Callable[[bytes], str]) -> None:
    """From now on ``fake`` sleeps ``gap`` before each chunk with text (``text_of``, the API's SSE parser) and
    appends ``(time written, text)`` to ``sent`` for every chunk (``""`` for those without text)."""
    respond = fake.respond

    class Paced(list[bytes]):
        def __iter__(self) -> Any:
            for chunk in list.__iter__(self):
                text = text_of(chunk)
                if text:
                    time.sleep(gap)
                sent.append((time.perf_counter(), text))
                yield chunk

    def paced(*args: Any) -> Any:
        outcome = respond(*args)
        outcome.chunks = Paced(outcome.chunks)
        return outcome

    fake.respond = paced
