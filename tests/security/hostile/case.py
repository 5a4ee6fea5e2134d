"""One row of the hostile-case table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    """A hostile input and what must hold for it.

    ``id`` names the case in pytest's output; ``data`` is whatever the section's entry points take (a path layout,
    a JSON line, a key, a reply body); ``expect`` says in words what must hold, so a failing case reads as the
    rule it broke.
    """

    id: str
    data: Any
    expect: str
    tags: frozenset[str] = field(default_factory=frozenset)


class Never:
    """A model that must not be asked: an entry point given hostile input refuses it before any request."""

    label = "never:model"

    async def __call__(self, env: dict[str, Any]) -> None:
        raise AssertionError("a model was asked")
