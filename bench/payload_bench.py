"""Anthropic turns on a long session against the raw SDK call with the payload a user writes by hand (issue 21 §2).

    .venv/bin/python bench/payload_bench.py            # 1,000 messages, 5 rounds x 7 interleaved pairs
    .venv/bin/python bench/payload_bench.py --quick

The raw side is ``client.messages.stream(messages=[{"role": ..., "content": "..."}, ...])``: string contents, as
the SDK's own examples and a user's code have it, never brute_nb's ``dump_all``. The brute_nb side is a whole turn
(SessionLog on a session file of ``n`` messages, the tool loop and pipeline, the provider with its default prompt
caching), on a fresh agent each time. Both talk to one keep-alive ``FakeProvider`` in its own process; pairs are
interleaved with alternating order and the result is the median of the rounds' ratios (as ``bench/run.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run import _raw_call, fake_server_process, history, median_ms, session_bytes

from brute_nb import agent
from brute_nb.message import Message
from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop

TARGET = 1.2


def hand_written(messages: list[Message], prompt: str) -> list[dict[str, Any]]:
    """What a user writes for the SDK: one dict per turn, its text as a plain string."""
    return [*({"role": str(m.role), "content": m.content} for m in messages), {"role": "user", "content": prompt}]


async def anthropic_turn(n: int, rounds: int, pairs: int, tmp: Path) -> dict[str, Any]:
    from brute_nb.providers.anthropic import AnthropicMessages

    hist = history(n)
    data = session_bytes(hist)
    payload = hand_written(hist, "next question")
    calls = 2 * (2 + rounds * pairs)
    with fake_server_process(calls) as (base_url, api_key):
        provider = AnthropicMessages("claude-fake", max_tokens=1024, base_url=base_url, api_key=api_key,
                                     max_retries=0)
        count = iter(range(1_000_000))

        def prepared() -> Any:
            path = tmp / f"turn-{n}-{next(count)}.jsonl"
            path.write_bytes(data)
            a = agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=[])
            a.run(provider)
            a.middleware(SessionLog).history()
            return a

        async def ours(a: Any) -> float:
            gc.collect()
            t0 = time.perf_counter()
            await a.astart("next question")
            return time.perf_counter() - t0

        async def raw() -> float:
            gc.collect()
            t0 = time.perf_counter()
            await _raw_call("anthropic", provider.client, payload)
            return time.perf_counter() - t0

        for _ in range(2):
            await ours(prepared())
            await raw()
        ratios, mine_all, raw_all = [], [], []
        for r in range(rounds):
            agents = [prepared() for _ in range(pairs)]
            mine, theirs = [], []
            for i, a in enumerate(agents):
                if (r * pairs + i) % 2:
                    theirs.append(await raw())
                    mine.append(await ours(a))
                else:
                    mine.append(await ours(a))
                    theirs.append(await raw())
            ratios.append(statistics.median(mine) / statistics.median(theirs))
            mine_all += mine
            raw_all += theirs
    ratio = statistics.median(ratios)
    return {"n": n, "ours_ms": median_ms(mine_all), "raw_ms": median_ms(raw_all), "ratio": ratio,
            "rounds": (min(ratios), max(ratios))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("-n", type=int, default=1000)
    args = parser.parse_args()
    rounds, pairs = (3, 5) if args.quick else (5, 7)
    with tempfile.TemporaryDirectory() as d:
        got = asyncio.run(anthropic_turn(args.n, rounds, pairs, Path(d)))
    lo, hi = got["rounds"]
    met = "yes" if got["ratio"] <= TARGET else "**NO**"
    print(f"| turn, anthropic, {got['n']} msgs vs hand-written string payload | <= {TARGET}x | "
          f"{got['ours_ms']:.2f} ms vs raw {got['raw_ms']:.2f} ms | {got['ratio']:.2f} | {met} | "
          f"median of {rounds} rounds x {pairs} pairs; rounds {lo:.2f}-{hi:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
