"""What ``%brute models`` shows: the providers this environment configures, and the models one of them offers.

Listing asks the provider's own models endpoint through its SDK (``client.models.list()``; an ``llm`` model asks
``llm``'s registry) with a short timeout. Invariant: listing never raises for an unreachable or refusing provider;
it returns the reason as text, because ``%brute models`` is a look around, not a turn.
"""

from __future__ import annotations

import os
from typing import Any

import anyio

from brute_nb.providers.compatible import ENDPOINTS, key_for

LIST_TIMEOUT = 10.0
VARIABLES = {"anthropic": ("ANTHROPIC_API_KEY",), "openai": ("OPENAI_API_KEY",), "ollama": ("OLLAMA_HOST",)}


def configured() -> list[tuple[str, str]]:
    """``(provider, how)`` for every provider the environment sets up."""
    found = [(name, f"{var} is set") for name, variables in VARIABLES.items() for var in variables
             if os.environ.get(var)]
    if os.environ.get("OPENAI_BASE_URL"):
        found.append(("openai", f"OPENAI_BASE_URL={os.environ['OPENAI_BASE_URL']}"))
    found += [(name, f"{' or '.join(e.keys)} is set ({e.base_url})") for name, e in ENDPOINTS.items()
              if key_for(name)]
    return found


async def _list(provider: Any) -> list[str]:
    if getattr(provider, "provider", None) == "llm":
        import llm

        return sorted(m.model_id for m in llm.get_models())
    with anyio.fail_after(LIST_TIMEOUT):
        page = await provider.client.models.list()
        return sorted(str(m.id) for m in page.data)


def list_models(provider: Any) -> tuple[list[str], str | None]:
    """The models ``provider`` offers, or ``([], why not)``."""
    from brute_nb.event_loop import run_sync

    try:
        return run_sync(lambda: _list(provider)), None
    except TimeoutError:
        return [], f"no answer within {LIST_TIMEOUT:g} s"
    except Exception as exc:
        status = getattr(exc, "status_code", None)
        return [], f"HTTP {status}" if status else f"{type(exc).__name__}: {exc}"
