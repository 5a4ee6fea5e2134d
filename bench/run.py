"""brute_nb benchmarks: ratios measured side by side in one run, medians of repeated runs (issue 8).

Run from the repository root: ``.venv/bin/python bench/run.py`` or ``.venv/bin/python -m bench.run`` (any Python with
the project's dependencies; ``--quick`` for fewer repetitions).
It prints a table (benchmark, target, result, ratio, met?) and appends it, with the date and the machine, to
``bench/RESULTS.md``. Nothing here asserts on time: a missed target is reported, and the exit status is non-zero
only when a benchmark could not run at all. The machine is shared and noisy, so every comparison interleaves
its two sides and reports the ratio of medians (the per-turn overhead: the median of several rounds' ratios).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import gc
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from brute_nb import agent  # noqa: E402
from brute_nb.message import Message, Role, ToolCall  # noqa: E402
from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop  # noqa: E402
from brute_nb.middleware.session_log import append_lines, replace_atomically  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"


@dataclass
class Row:
    name: str
    target: str
    result: str
    ratio: float | None
    met: bool | None
    note: str = ""


def history(n: int) -> list[Message]:
    """n messages alternating user/assistant (a valid history for every API), realistic lengths."""
    out = []
    for i in range(n):
        role = Role.USER if i % 2 == 0 else Role.ASSISTANT
        out.append(Message(role, f"message {i}: " + "lorem ipsum dolor sit amet " * 6,
                           meta={"model": "bench", "input_tokens": i} if role == Role.ASSISTANT else None))
    return out


def session_bytes(messages: list[Message]) -> bytes:
    return "".join(m.to_json() + "\n" for m in messages).encode()


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


# --- per-turn overhead ---------------------------------------------------------------------------------------

async def _raw_call(kind: str, client: Any, payload: list[dict[str, Any]]) -> None:
    if kind == "openai":
        stream = await client.chat.completions.create(model="gpt-fake", messages=payload, stream=True,
                                                      stream_options={"include_usage": True})
        async with stream:
            async for _ in stream:
                pass
    else:
        async with client.messages.stream(model="claude-fake", max_tokens=1024, messages=payload) as s:
            async for _ in s:
                pass
            await s.get_final_message()


_SERVER = """
import sys
from brute_nb.testing import FakeProvider
with FakeProvider(["ok, done"] * int(sys.argv[1]), keep_alive=True) as fake:
    print(fake.base_url, fake.api_key, flush=True)
    sys.stdin.read()  # serve until the benchmark closes stdin
    print(fake.received, fake.connections, flush=True)
"""


@contextlib.contextmanager
def fake_server_process(replies: int, counts: dict[str, int] | None = None) -> Iterator[tuple[str, str]]:
    """A FakeProvider in its own process, as a real API is: ``(base_url, api_key)``, ``replies`` replies queued.
    It keeps connections alive as the real APIs do (a turn that loses its pooled connection, or sends its
    request twice, pays for it here); ``counts`` receives the requests and connections it served.

    In this process its request threads would compete with the client for the GIL, and charge their work
    (closing the connection, recording the request) to whichever side does Python work after its reply.
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-c", _SERVER, str(replies)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        base_url, api_key = proc.stdout.readline().split()
        yield base_url, api_key
    finally:
        proc.stdin.close()
        served = proc.stdout.readline().split()
        if counts is not None and len(served) == 2:
            counts.update(requests=int(served[0]), connections=int(served[1]))
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def turn_overhead(kind: str, n: int, rounds: int, pairs: int, tmp: Path) -> Row:
    """A brute_nb turn (SessionLog, tool loop, tool pipeline, provider) vs the raw SDK call, on one fake server.

    Noise-robust by construction: ``rounds`` rounds of ``pairs`` pairs, the two sides interleaved with their order
    alternating pair by pair (neither side always runs on the other's warm caches), a ``gc.collect()`` before each
    timed call (one side's garbage is not the other's cost), and the result is the median of the rounds' ratios
    (each round's median turn over its median raw call), with the rounds' spread in the note. Each of our turns
    is on a fresh agent and session file of ``n`` messages (history cached as in a notebook), so it also pays
    the first-turn build of the session's log.
    """
    from brute_nb.providers.anthropic import AnthropicMessages
    from brute_nb.providers.openai import OpenAIChat
    from brute_nb.transports.anthropic import Anthropic
    from brute_nb.transports.openai import OpenAI

    hist = history(n)
    data = session_bytes(hist)
    transport: Any = OpenAI if kind == "openai" else Anthropic
    raw_payload = transport.dump_all([*hist, Message(Role.USER, "next question")])
    calls = 2 * (2 + rounds * pairs)
    served: dict[str, int] = {}
    with fake_server_process(calls, served) as (base_url, api_key):
        if kind == "openai":
            provider: Any = OpenAIChat("gpt-fake", base_url=base_url + "/v1", api_key=api_key, max_retries=0)
        else:
            provider = AnthropicMessages("claude-fake", max_tokens=1024, base_url=base_url, api_key=api_key,
                                         max_retries=0)
        client = provider.client
        turns = iter(range(1_000_000))

        def prepared() -> Any:
            """An agent on a fresh session file of ``n`` messages, history cached as a notebook session has it."""
            path = tmp / f"turn-{kind}-{n}-{next(turns)}.jsonl"
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
            await _raw_call(kind, client, raw_payload)
            return time.perf_counter() - t0

        for _ in range(2):  # warm-ups (connection code paths, imports), not counted
            await ours(prepared())
            await raw()
        ratios, ours_all, raw_all = [], [], []
        for r in range(rounds):
            # Set up before the round, so no file is created just before a timed call of either side.
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
            ours_all += mine
            raw_all += theirs
    ratio = statistics.median(ratios)
    limit = 1.25 if n <= 10 else 1.5
    return Row(f"turn overhead, {kind}, {n} msgs", f"<= {limit}x raw SDK",
               f"{median_ms(ours_all):.2f} ms vs raw {median_ms(raw_all):.2f} ms", ratio, ratio <= limit,
               f"median of {rounds} rounds x {pairs} interleaved pairs; rounds {min(ratios):.2f}-{max(ratios):.2f}; "
               f"keep-alive fake: {served.get('requests')} requests for {calls} calls, "
               f"{served.get('connections')} connection(s)")


# --- session persistence ----------------------------------------------------------------------------------------

async def _answer(env: dict[str, Any]) -> None:
    """A model stand-in that does no work per history message (Scripted records every request: O(history))."""
    env["messages"].append(Message(Role.ASSISTANT, "fine"))


async def _session_agent(path: Path, data: bytes) -> tuple[Any, float]:
    """An agent on a session file after its first turn (a notebook session: history cached, session log built).

    Returns the agent and how long that first turn took (it parses nothing, the cache is warm, but builds the
    session's Log from the cached history once: O(history), once per kernel).
    """
    path.write_bytes(data)  # noqa: ASYNC240 - setup outside the timed region; blocking is fine here
    a = agent().use(SessionLog, path=path).run(_answer)
    a.middleware(SessionLog).history()
    t0 = time.perf_counter()
    await a.astart("first")
    return a, time.perf_counter() - t0


async def _timed_turn(a: Any) -> float:
    gc.collect()  # garbage of the other side's turn is not this turn's cost
    t0 = time.perf_counter()
    await a.astart("one more")
    return time.perf_counter() - t0


async def persistence(reps: int, tmp: Path) -> list[Row]:
    small, first_small = await _session_agent(tmp / "small.jsonl", session_bytes(history(10)))
    big, first_big = await _session_agent(tmp / "big.jsonl", session_bytes(history(50_000)))
    t_small, t_big = [], []
    for _ in range(reps * 2):  # consecutive turns of two live sessions, interleaved
        t_small.append(await _timed_turn(small))
        t_big.append(await _timed_turn(big))
    ratio = statistics.median(t_big) / statistics.median(t_small)
    rows = [Row("save one turn, 50,000 vs 10 msgs", "<= 2x",
                f"{median_ms(t_big):.2f} ms vs {median_ms(t_small):.2f} ms", ratio, ratio <= 2.0,
                "a later turn through SessionLog (session log kept, append, close_unanswered)"),
            Row("first turn of a kernel, 50,000 vs 10 msgs", "comparison only",
                f"{first_big * 1000:.2f} ms vs {first_small * 1000:.2f} ms", first_big / first_small, None,
                "builds the session's Log from the cached history once")]
    msgs = history(50_000)
    rewrite, append = [], []
    path = tmp / "rewrite.jsonl"
    for _ in range(max(3, reps // 3)):
        t0 = time.perf_counter()
        replace_atomically(path, msgs)
        t1 = time.perf_counter()
        append_lines(path, msgs[-2:])
        t2 = time.perf_counter()
        rewrite.append(t1 - t0)
        append.append(t2 - t1)
    r = statistics.median(rewrite) / statistics.median(append)
    rows.append(Row("full atomic rewrite vs append, 50,000 msgs", "comparison only",
                    f"{median_ms(rewrite):.1f} ms vs append {median_ms(append):.3f} ms", r, None,
                    "what an O(history) save would cost each turn"))
    return rows


# --- log to DataFrame ---------------------------------------------------------------------------------------------

def dataframe(reps: int) -> Row:
    import pandas as pd

    from brute_nb.frames import frame

    log = history(100_000)
    for i in range(0, len(log), 10):  # some tool calls, as a real session has
        log[i + 1] = log[i + 1].replace(tool_calls=[ToolCall(f"c{i}", "read", {"file_path": f"f{i}.py"})])
    ours, naive = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        frame(log)
        t1 = time.perf_counter()
        pd.DataFrame([m.to_dict() for m in log])
        t2 = time.perf_counter()
        ours.append(t1 - t0)
        naive.append(t2 - t1)
    ratio = statistics.median(ours) / statistics.median(naive)
    return Row("frame(log), 100,000 msgs", "faster than naive, < 1 s",
               f"{median_ms(ours):.0f} ms vs naive {median_ms(naive):.0f} ms", ratio,
               ratio < 1 and statistics.median(ours) < 1.0)


# --- tool concurrency ---------------------------------------------------------------------------------------------

async def concurrency(reps: int) -> Row:
    from brute_nb.testing.scripted import Scripted, call, reply
    from brute_nb.tools import tool

    @tool
    def nap(seconds: float) -> str:
        """Sleep (blocking, on a worker thread) and say so.

        Args:
            seconds: how long
        """
        time.sleep(seconds)
        return "slept"

    walls = []
    for _ in range(reps):
        calls = [call("nap", {"seconds": 0.25}) for _ in range(8)]
        a = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[nap]).run(
            Scripted([reply("", *calls), "done"]))
        t0 = time.perf_counter()
        env = await a.astart("nap 8 times")
        walls.append(time.perf_counter() - t0)
        results = [m for m in env["messages"] if m.role == Role.TOOL]
        if [m.content for m in results] != ["slept"] * 8:
            raise RuntimeError(f"the tools did not all run: {[m.content for m in results]}")
    ratio = statistics.median(walls) / 0.25
    return Row("8 tools x 0.25 s (blocking, threads)", "wall/0.25 <= 1.3",
               f"{median_ms(walls):.0f} ms wall", ratio, ratio <= 1.3)


# --- streaming latency ------------------------------------------------------------------------------------------

FAST_GAP = 0.03  # seconds between text chunks: ~33 chunks/s of 6 characters, a fast model's pace
SLOW_GAP = 0.1  # 10 chunks/s: a slow model (a large local model, a loaded API), slower than the update cap
STREAM_WORDS = [f"w{i:04d} " for i in range(40)]  # 6 characters each, so each SSE chunk carries one marker


def _delta_text(chunk: bytes) -> str:
    """The reply text an OpenAI chat SSE chunk carries ('' for role, finish, usage and [DONE] chunks)."""
    data = chunk.decode().strip().removeprefix("data: ")
    try:
        choices = json.loads(data).get("choices") or [{}]
    except ValueError:
        return ""
    return str(choices[0].get("delta", {}).get("content") or "")


def _paced(fake: Any, sent: list[tuple[float, str]], gap: float) -> None:
    """Make the fake server send text chunks ``gap`` seconds apart, stamping each just before it is written."""
    respond = fake.respond

    class Paced(list[bytes]):
        def __iter__(self) -> Any:
            for chunk in list.__iter__(self):
                text = _delta_text(chunk)
                if text:
                    time.sleep(gap)
                sent.append((time.perf_counter(), text))
                yield chunk

    def paced(*args: Any) -> Any:
        outcome = respond(*args)
        outcome.chunks = Paced(outcome.chunks)
        return outcome

    fake.respond = paced


def _latencies(sent: list[tuple[float, str]], shown: list[tuple[float, str]]) -> tuple[list[float], float]:
    """Per text chunk, the time to the first display update showing it; and last chunk -> final update."""
    per_chunk = []
    for t_sent, text in sent:
        if text:
            marker = text.strip()
            per_chunk.append(next(t for t, html in shown if t >= t_sent and marker in html) - t_sent)
    return per_chunk, shown[-1][0] - sent[-1][0]


async def _stream_runs(reps: int, gap: float) -> tuple[list[float], list[float], list[float]]:
    """Per-chunk, first-chunk and final-flush latencies of ``reps`` streamed replies, chunks ``gap`` apart."""
    from brute_nb.notebook.display import CellView
    from brute_nb.providers.openai import OpenAIChat
    from brute_nb.testing import FakeProvider

    sent: list[tuple[float, str]] = []
    shown: list[tuple[float, str]] = []
    chunks, firsts, finals = [], [], []
    with FakeProvider() as fake:
        _paced(fake, sent, gap)
        provider = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
        a = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[]).run(provider)
        for i in range(reps + 1):  # one warm-up (connection, imports), not counted
            view = CellView(publish=lambda *args, **kw: None,
                            update=lambda bundle, display_id: shown.append((time.perf_counter(),
                                                                            bundle["text/html"])))
            view.start()
            view.attach(a)
            sent.clear()
            shown.clear()
            fake.add("".join(STREAM_WORDS))
            await a.astart("stream please")
            view.detach(a)
            per_chunk, final = _latencies(sent, shown)
            if i:
                chunks.extend(per_chunk)
                firsts.append(per_chunk[0])
                finals.append(final)
    return chunks, firsts, finals


def _chunk_row(chunks: list[float], gap: float, pace: str) -> Row:
    from brute_nb.notebook.display import MAX_UPDATES_PER_S

    med, p90 = statistics.median(chunks), statistics.quantiles(chunks, n=10)[-1]
    return Row(f"stream: chunk sent -> first update showing it, {pace}", "<= 20 ms median",
               f"median {med * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms, max {max(chunks) * 1000:.1f} ms", None,
               med <= 0.02, f"chunks {gap * 1000:.0f} ms apart; updates coalesced to <= {MAX_UPDATES_PER_S}/s "
                            f"(window {1000 / MAX_UPDATES_PER_S:.0f} ms, trailing flush)")


async def streaming(reps: int) -> list[Row]:
    fast, firsts, finals = await _stream_runs(reps, FAST_GAP)
    slow, _, _ = await _stream_runs(reps, SLOW_GAP)
    return [
        _chunk_row(slow, SLOW_GAP, "slow model"),
        _chunk_row(fast, FAST_GAP, "fast model"),
        Row("stream: first chunk of a reply -> update", "<= 20 ms median", f"median {median_ms(firsts):.1f} ms",
            None, statistics.median(firsts) <= 0.02, "nothing written in the last window: shown at once"),
        Row("stream: last chunk sent -> final flush", "<= 20 ms median", f"median {median_ms(finals):.1f} ms",
            None, statistics.median(finals) <= 0.02, "the reply's message forces an update"),
    ]


# --- load time and memory (separate processes) --------------------------------------------------------------------

LOAD_BARE = "import IPython; ip = IPython.InteractiveShell.instance()"
LOAD_EXT = LOAD_BARE + "; ip.run_line_magic('load_ext', 'brute_nb')"


def _wall(code: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True)
    return time.perf_counter() - t0


def load_time(reps: int) -> list[Row]:
    peer = importlib.util.find_spec("jupyter_ai_magics") is not None  # a peer, not a dependency
    bare, ext, ai = [], [], []
    for _ in range(reps):  # interleaved, each in a fresh process
        bare.append(_wall(LOAD_BARE))
        ext.append(_wall(LOAD_EXT))
        if peer:
            ai.append(_wall(LOAD_BARE + "; ip.run_line_magic('load_ext', 'jupyter_ai_magics')"))
    added = statistics.median(ext) - statistics.median(bare)
    rows = [Row("%load_ext brute_nb (fresh process)", "<= 0.1 s added",
                f"+{added * 1000:.0f} ms ({median_ms(ext):.0f} vs bare {median_ms(bare):.0f} ms)",
                statistics.median(ext) / statistics.median(bare), added <= 0.1, f"median of {reps} runs")]
    if peer:
        peer_added = statistics.median(ai) - statistics.median(bare)
        rows.append(Row("%load_ext jupyter_ai_magics (peer)", "comparison only",
                        f"+{peer_added * 1000:.0f} ms ({median_ms(ai):.0f} vs bare {median_ms(bare):.0f} ms)",
                        statistics.median(ai) / statistics.median(bare), None, f"median of {reps} runs"))
    else:
        rows.append(Row("%load_ext jupyter_ai_magics (peer)", "comparison only", "not installed", None, None,
                        "not a dependency; install it to compare"))
    return rows


# ru_maxrss survives fork+exec on Linux (the child reports the parent's peak), so the peak is read from
# /proc/self/status VmHWM (reset by exec) where it exists, resource.getrusage elsewhere.
MEMORY_CHILD = """
import resource, sys
def peak():
    try:
        for line in open('/proc/self/status'):
            if line.startswith('VmHWM:'):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from brute_nb.middleware.session_log import read_session
before = peak()
messages = read_session(sys.argv[1])
after = peak()
print(len(messages), before, after)
"""


def memory(tmp: Path) -> Row:
    path = tmp / "memory.jsonl"
    path.write_bytes(session_bytes(history(100_000)))
    out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(path)], check=True, cwd=ROOT,
                         capture_output=True, text=True).stdout.split()
    count, before, after = (int(x) for x in out)
    if count != 100_000:
        raise RuntimeError(f"read {count} messages, expected 100,000")
    size = path.stat().st_size
    grown = (after - before) * 1024  # ru_maxrss is in KiB on Linux
    ratio = grown / size
    return Row("peak RSS loading 100,000 msgs", "report (no target set)",
               f"+{grown / 2**20:.0f} MiB for a {size / 2**20:.0f} MiB JSONL", ratio, None,
               "peak RSS growth / file size")


# --- driver ------------------------------------------------------------------------------------------------------

def run_all(quick: bool) -> tuple[list[Row], list[str]]:
    reps = 5 if quick else 15
    rows: list[Row] = []
    failures: list[str] = []

    def attempt(name: str, fn: Callable[[], Row | list[Row]]) -> None:
        print(f"running: {name}", file=sys.stderr, flush=True)
        try:
            got = fn()
        except Exception:
            failures.append(f"{name}: {traceback.format_exc()}")
            return
        rows.extend(got if isinstance(got, list) else [got])

    def aio(coro_fn: Callable[[], Awaitable[Any]]) -> Callable[[], Any]:
        return lambda: asyncio.run(coro_fn())  # type: ignore[arg-type]

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        os.environ.setdefault("BRUTE_NB_OVERFLOW_DIR", str(tmp / "overflow"))
        for kind in ("openai", "anthropic"):
            for n in (10, 1000):
                rounds, pairs = (7, reps) if n <= 10 else (5, max(3, reps // 2))
                attempt(f"turn {kind} {n}", aio(lambda k=kind, n=n, r=rounds, p=pairs: turn_overhead(k, n, r, p, tmp)))
        attempt("persistence", aio(lambda: persistence(reps, tmp)))
        attempt("dataframe", lambda: dataframe(max(3, reps // 3)))
        attempt("concurrency", aio(lambda: concurrency(max(3, reps // 3))))
        attempt("streaming", aio(lambda: streaming(max(3, reps // 3))))
        attempt("load time", lambda: load_time(max(5, reps // 2)))
        attempt("memory", lambda: memory(tmp))
        attempt("prompt cache", prompt_cache)
    return rows, failures


def prompt_cache() -> Row:
    """Billed input of a 30-step tool loop with the provider's cache breakpoints vs without (bench/cache.py)."""
    from bench.cache import STEPS, TARGET, measure

    r = measure()
    return Row(f"prompt cache, {STEPS}-step loop", f"<= {TARGET:.0%} of uncached",
               f"${r['cached_usd']:.4f} vs ${r['uncached_usd']:.4f}", r["ratio"], r["met"],
               "billed input priced with genai-prices; fake server models cache reads/writes")


def table(rows: list[Row]) -> str:
    lines = ["| benchmark | target | result | ratio | met? | note |", "|---|---|---|---|---|---|"]
    for r in rows:
        met = "n/a" if r.met is None else ("yes" if r.met else "**NO**")
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}"
        lines.append(f"| {r.name} | {r.target} | {r.result} | {ratio} | {met} | {r.note} |")
    return "\n".join(lines)


def machine() -> str:
    return (f"{platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}")


def main() -> int:
    quick = "--quick" in sys.argv
    rows, failures = run_all(quick)
    text = table(rows)
    print(text)
    for f in failures:
        print(f"COULD NOT RUN: {f}", file=sys.stderr)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write(f"\n## {stamp}{' (quick)' if quick else ''}\n\nMachine: {machine()}\n\n{text}\n")
        for f in failures:
            out.write(f"\nCould not run: {f.splitlines()[0]}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
