"""Prompt caching bench (issue 18): a 30-step tool loop, billed input priced with genai-prices, cached vs not.

The loop is what a user's agent does: the real built-in tools and the notebook's system prompt, a tool call at
every step answered with a file-sized result, then a final answer. It runs twice against the fake server (whose
``cache_model`` bills cache reads and writes as the APIs document): once with the Anthropic provider placing its
breakpoints, once with ``cache=False`` (the same requests, no marks: what a hand-written loop sends). Billed
input is priced with the table (reads at their rate, writes at theirs). Target: cached ≤ 30% of uncached.

Run alone: ``python bench/cache.py``; ``bench/run.py`` runs it too.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from genai_prices import Usage, calc_price  # noqa: E402

from brute_nb import agent  # noqa: E402
from brute_nb.middleware import ToolResultLoop  # noqa: E402
from brute_nb.middleware.system_prompt import SystemPrompt  # noqa: E402
from brute_nb.notebook.stack import default_system_prompt, select_tools  # noqa: E402
from brute_nb.providers.anthropic import AnthropicMessages  # noqa: E402
from brute_nb.testing import AnswerCalls, FakeProvider, call, reply  # noqa: E402
from brute_nb.tools.adapter import wrap_all  # noqa: E402
from brute_nb.usage import Usage as Tokens  # noqa: E402

STEPS = 30
MODEL = "claude-sonnet-4-20250514"
TARGET = 0.30
RESULT = "".join(f"{i:4d}\tdef function_{i}(value):  # a line of the file the tool read\n" for i in range(25))


def input_price(meta: dict[str, Any]) -> float:
    usage = Tokens.of_meta({**meta, "output_tokens": 0}) or Tokens()
    return float(calc_price(Usage(**usage.to_dict()), MODEL, provider_id="anthropic").input_price)


async def loop(cache: bool) -> tuple[float, int, int]:
    """(billed input in USD, cache-read tokens, requests) for one 30-step loop."""
    script = [reply(f"Step {i}: reading the next file.", call("read", {"file_path": f"src/m{i}.py"}))
              for i in range(STEPS)]
    with FakeProvider([*script, "All files read; the bug is in m7.py."]) as fake:
        provider = AnthropicMessages(MODEL, base_url=fake.base_url, api_key=fake.api_key, max_retries=0, cache=cache)
        system = default_system_prompt(None, ROOT / "notebooks" / "sample_project")
        bot = (agent().use(SystemPrompt, text=system).use(ToolResultLoop)
               .use(AnswerCalls, tools=list(wrap_all(select_tools("all")).values()), answer=RESULT).run(provider))
        env = await bot.astart("Read every module under src/ and find the bug.")
        replies = [m for m in env["messages"] if m.role == "assistant"]
        reads = sum((m.usage or Tokens()).cache_read_tokens for m in replies)
        return sum(input_price(dict(m.meta)) for m in replies), reads, len(fake.requests)


def measure() -> dict[str, Any]:
    cached, reads, n = asyncio.run(loop(True))
    uncached, none_read, m = asyncio.run(loop(False))
    ratio = cached / uncached
    return {"cached_usd": cached, "uncached_usd": uncached, "ratio": ratio, "met": ratio <= TARGET,
            "requests": (n, m), "cache_read_tokens": (reads, none_read)}


if __name__ == "__main__":
    result = measure()
    print(f"{STEPS}-step tool loop, billed input ({MODEL} prices): cached ${result['cached_usd']:.4f} vs uncached "
          f"${result['uncached_usd']:.4f} = {result['ratio']:.0%} (target <= {TARGET:.0%}: "
          f"{'met' if result['met'] else 'NOT met'}); requests {result['requests']}")
