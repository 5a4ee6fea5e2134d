"""Streaming on the wire (issue 21 §1; issue 29 §3's targets: <= 2x print's bytes, <= 1.3x its CPU, median chunk
-> IOPub <= 60 ms): IOPub bytes, kernel CPU and chunk -> client latency of one streamed reply in a real kernel,
a ``%%brute`` cell against a cell that prints the same chunks from the raw ``anthropic`` SDK.

    .venv/bin/python bench/stream_bench.py             # 40,000 characters, 30 ms apart (~200 s a side)
    .venv/bin/python bench/stream_bench.py --quick     # 10,000 characters
    .venv/bin/python bench/stream_bench.py --envelope 1000  # also ipykernel's own cost per IOPub message
    .venv/bin/python bench/stream_bench.py --rate 50   # live writes capped at 50 a second instead of 10

Both cells read the same scripted reply from one loopback ``FakeProvider`` whose chunks (6 characters each, one
marker word per chunk) are written ``GAP`` seconds apart and stamped as they are written. A raw ZMQ subscriber on
the kernel's IOPub socket counts every byte of every message the cell causes (all frames, signature included) and
stamps the first message that carries each marker: that is "chunk -> screen" short of the browser's own drawing.
Kernel CPU is the kernel process's user+system time over the cell (psutil). Nothing asserts: it prints rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.pacing import pace  # noqa: E402

GAP = 0.03  # ~33 chunks a second: a fast model


def reply_text(chars: int) -> str:
    """Words of exactly 6 characters (one per streamed piece), a blank line every 60 words (a paragraph: ``pNNN``
    and the blank line, NNN counting paragraphs, so every piece is a marker found nowhere else)."""
    words = [f"p{i // 60:03d}\n\n" if i % 60 == 59 else f"w{i:04d} " for i in range(chars // 6)]
    return "".join(words)


def text_of(chunk: bytes) -> str:
    """The reply text an Anthropic SSE chunk carries ('' for the others)."""
    for line in chunk.decode().splitlines():
        if line.startswith("data: "):
            try:
                delta = json.loads(line[6:]).get("delta") or {}
            except ValueError:
                return ""
            return str(delta.get("text") or "") if isinstance(delta, dict) else ""
    return ""


def markers(sent: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """The text chunks of a paced stream, each with its marker word (``reply_text``: one word a chunk)."""
    return [(t, text.strip()) for t, text in sent if text]


def kernel_env(fake: Any) -> dict[str, str]:
    """A bench kernel's environment: this checkout first on its path, the fake as its only model provider."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "ANTHROPIC_API_KEY": fake.api_key or "",
            "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "", "OLLAMA_HOST": "", "BRUTE_MODEL": "",
            "BRUTE_NB_NOTEBOOK": "bench.ipynb"}


class IOPubTap:
    """A second subscriber on the kernel's IOPub socket: bytes and first-seen times per parent message."""

    def __init__(self, km: Any) -> None:
        import zmq

        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.SUB)
        self.sock.setsockopt(zmq.SUBSCRIBE, b"")
        self.sock.connect(f"{km.transport}://{km.ip}:{km.iopub_port}")
        self.bytes: dict[str, int] = {}
        self.count: dict[str, int] = {}
        self.seen: list[tuple[float, str, bytes]] = []
        self.idle: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import zmq

        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(100):
                continue
            frames = self.sock.recv_multipart()
            now = time.perf_counter()
            at = frames.index(b"<IDS|MSG>")
            parent = json.loads(frames[at + 3]).get("msg_id", "")
            self.bytes[parent] = self.bytes.get(parent, 0) + sum(len(f) for f in frames)
            self.count[parent] = self.count.get(parent, 0) + 1
            self.seen.append((now, parent, frames[at + 5]))
            if b'"execution_state": "idle"' in frames[at + 5] or b'"execution_state":"idle"' in frames[at + 5]:
                self.idle.add(parent)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close(0)
        self.ctx.term()


def run_cell(kc: Any, tap: IOPubTap, code: str, timeout: float) -> str:
    msg_id: str = kc.execute(code)
    deadline = time.monotonic() + timeout
    while msg_id not in tap.idle:
        if time.monotonic() > deadline:
            raise TimeoutError(code[:60])
        time.sleep(0.05)
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{code[:60]!r}: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")
    return msg_id


def latencies(tap: IOPubTap, msg_id: str, sent: list[tuple[float, str]]) -> list[float]:
    """Per marker, the first IOPub message of the cell that carries it, less the time it was written."""
    pending = dict((marker, t) for t, marker in sent)
    out = []
    for now, parent, content in tap.seen:
        if parent != msg_id:
            continue
        text = content.decode("utf-8", "replace")
        for marker in [m for m in pending if m in text]:
            out.append(now - pending.pop(marker))
    return out


PRINT_CELL = """\
import anthropic
_client = anthropic.Anthropic(base_url={base!r}, api_key={key!r}, max_retries=0)
with _client.messages.stream(model="claude-fake", max_tokens=32000,
                             messages=[{{"role": "user", "content": "stream please"}}]) as _s:
    for _text in _s.text_stream:
        print(_text, end="")
"""


NO_LIVE = ("import brute_nb.notebook.runner as _runner\n"
           "_runner.live_sink = _runner.NoLive\n")


WIDGET_CELL = """\
import time, anywidget, traitlets
class _Quiet(anywidget.AnyWidget):
    _esm = traitlets.Unicode("export default {}").tag(sync=True)
_w = _Quiet()
"""

PACED_CELL = """\
_next = time.perf_counter()
for _i in range({n}):
    _next += {gap}
    time.sleep(max(0.0, _next - time.perf_counter()))
    {action}
"""

ENVELOPE_SIDES = [("idle", "pass"), ("print", 'print("w0001 ", end="")'), ("comm", '_w.send("w0001 ")')]
"""Paced like the stream, no model: doing nothing; a print per chunk (ipykernel batches them into stream
messages); one comm message per chunk carrying 6 characters, what the live view sends for the usual delta."""


def envelope(kc: Any, tap: IOPubTap, proc: Any, n: int, gap: float) -> list[dict[str, Any]]:
    """ipykernel's own cost per IOPub message, with none of brute_nb's code: bytes and CPU of ``n`` paced chunks
    sent as comm messages against printed, against idle."""
    run_cell(kc, tap, WIDGET_CELL, 60)
    rows = []
    for side, action in ENVELOPE_SIDES:
        cpu0 = sum(proc.cpu_times()[:2])
        msg_id = run_cell(kc, tap, PACED_CELL.format(n=n, gap=gap, action=action), 60 + 2 * n * gap)
        rows.append({"side": f"paced {side}", "chunks": n, "cpu_s": sum(proc.cpu_times()[:2]) - cpu0,
                     "bytes": tap.bytes[msg_id], "messages": tap.count[msg_id]})
    return rows


def measure(chars: int, gap: float, nothing_live: bool = False, rate: float | None = None,
            paced: int = 0) -> list[dict[str, Any]]:
    import psutil
    from jupyter_client.manager import start_new_kernel

    from brute_nb.testing import FakeProvider

    text = reply_text(chars)
    rows = []
    with FakeProvider() as fake, tempfile.TemporaryDirectory() as tmp:
        sent: list[tuple[float, str]] = []
        pace(fake, sent, gap, text_of)
        km, kc = start_new_kernel(kernel_name="python3", cwd=tmp, env=kernel_env(fake))
        tap = IOPubTap(km)
        try:
            proc = psutil.Process(km.provisioner.pid)
            time.sleep(0.5)  # the tap's subscription is live
            run_cell(kc, tap, "%load_ext brute_nb\nimport anthropic, anywidget", 60)
            fake.add("warm up")  # connections, imports, the first widget: not counted
            run_cell(kc, tap, "%%brute\nwarm up", 60)
            fake.add("warm up")
            run_cell(kc, tap, PRINT_CELL.format(base=fake.base_url, key=fake.api_key), 60)
            brute = "%%brute\nstream please"
            if rate:  # another cap on live writes a second than the default (display.LIVE_RATE)
                brute = (f"import brute_nb.notebook.views.display as _display\n_display.LIVE_RATE = {rate}\n"
                         "get_ipython().run_cell_magic('brute', '', 'stream please')")
            sides = [("print", PRINT_CELL.format(base=fake.base_url, key=fake.api_key)), ("brute", brute)]
            if nothing_live:  # diagnosis: the turn's own cost, with no live view at all
                cell = NO_LIVE + "get_ipython().run_cell_magic('brute', '', 'stream please')"
                sides.append(("brute, nothing live", cell))
            if paced:
                rows.extend(envelope(kc, tap, proc, paced, gap))
            for side, code in sides:
                fake.add(text)
                sent.clear()
                cpu0 = sum(proc.cpu_times()[:2])
                msg_id = run_cell(kc, tap, code, 60 + 3 * gap * len(text) / 6)
                cpu = sum(proc.cpu_times()[:2]) - cpu0
                lat = latencies(tap, msg_id, markers(sent))
                rows.append({"side": side, "chars": len(text), "chunks": len(markers(sent)), "bytes": tap.bytes[msg_id],
                             "messages": tap.count[msg_id], "cpu_s": cpu,
                             "latency_median_ms": statistics.median(lat) * 1000 if lat else None,
                             "latency_p90_ms": statistics.quantiles(lat, n=10)[-1] * 1000 if len(lat) > 1 else None,
                             "shown": len(lat)})
        finally:
            tap.close()
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    return rows


def report_envelope(rows: list[dict[str, Any]], base: dict[str, Any], chunks: int) -> str:
    """Per chunk, over the idle loop: what ipykernel costs to send a comm message against a printed chunk; and the
    bytes floor of one message per chunk against 2x the print stream."""
    by = {r["side"]: r for r in rows}
    idle, printed, comm = by["paced idle"], by["paced print"], by["paced comm"]

    def us(row: dict[str, Any]) -> float:
        return (row["cpu_s"] - idle["cpu_s"]) / row["chunks"] * 1e6

    per_msg = comm["bytes"] / comm["messages"]
    lines = ["| measure (paced, no model) | print | comm message | note |", "|---|---|---|---|",
             f"| kernel CPU per chunk over idle | {us(printed):.0f} us | {us(comm):.0f} us | "
             f"{comm['chunks']:,} chunks; idle loop {idle['cpu_s'] / idle['chunks'] * 1e6:.0f} us a chunk |",
             f"| IOPub messages | {printed['messages']:,} | {comm['messages']:,} | |",
             f"| IOPub bytes per message | {printed['bytes'] / max(printed['messages'], 1):,.0f} | {per_msg:,.0f} | "
             "all frames, signature included |",
             f"| bytes floor, one message per chunk ({chunks:,} chunks) | 2x print stream: {2 * base['bytes']:,} | "
             f"{per_msg * chunks:,.0f} | {per_msg * chunks / base['bytes']:.1f}x the print stream |"]
    return "\n".join(lines)


def report(rows: list[dict[str, Any]], gap: float) -> str:
    paced = [r for r in rows if r["side"].startswith("paced ")]
    rows = [r for r in rows if not r["side"].startswith("paced ")]
    base, ours = rows[0], rows[1]
    lines = ["| measure | print stream | %%brute | ratio | target | met? |", "|---|---|---|---|---|---|"]

    def row(name: str, a: float, b: float, fmt: str, target: str, ok: bool | None) -> None:
        met = "" if ok is None else ("yes" if ok else "**NO**")
        lines.append(f"| {name} | {a:{fmt}} | {b:{fmt}} | {b / a:.2f}x | {target} | {met} |")

    row("IOPub bytes", base["bytes"], ours["bytes"], ",.0f", "<= 2x print", ours["bytes"] <= 2 * base["bytes"])
    row("IOPub messages", base["messages"], ours["messages"], ",.0f", "", None)
    row("kernel CPU (s)", base["cpu_s"], ours["cpu_s"], ".2f", "<= 1.3x print",
        ours["cpu_s"] <= 1.3 * base["cpu_s"])
    lat_b, lat_o = base["latency_median_ms"] or 0.0, ours["latency_median_ms"] or 0.0
    lines.append(f"| chunk -> IOPub, median (p90) ms | {lat_b:.1f} ({base['latency_p90_ms'] or 0:.1f}) | "
                 f"{lat_o:.1f} ({ours['latency_p90_ms'] or 0:.1f}) | | <= 60 ms | "
                 f"{'yes' if lat_o <= 60 else '**NO**'} |")
    head = (f"{base['chars']:,} characters in {base['chunks']:,} chunks {gap * 1000:.0f} ms apart; "
            f"markers seen: print {base['shown']:,}, brute {ours['shown']:,}")
    if len(rows) > 2:
        extra = rows[2]
        lines.append(f"| kernel CPU (s), {extra['side']} | {base['cpu_s']:.2f} | {extra['cpu_s']:.2f} | "
                     f"{extra['cpu_s'] / base['cpu_s']:.2f}x | | |")
    out = head + "\n\n" + "\n".join(lines)
    if paced:
        out += "\n\n" + report_envelope(paced, base, ours["chunks"])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 characters instead of 40,000")
    parser.add_argument("--chars", type=int, default=None)
    parser.add_argument("--gap", type=float, default=GAP)
    parser.add_argument("--rate", type=float, default=None, help="live writes a second at most")
    parser.add_argument("--nothing-live", action="store_true", help="also a %%brute turn with no live view")
    parser.add_argument("--envelope", type=int, default=0, metavar="N",
                        help="also N paced chunks idle / printed / as comm messages: ipykernel's cost per message")
    args = parser.parse_args()
    chars = args.chars or (10_000 if args.quick else 40_000)
    rows = measure(chars, args.gap, args.nothing_live, args.rate, args.envelope)
    print(json.dumps(rows, indent=1))
    print(report(rows, args.gap) + (f"\n\nlive writes capped at {args.rate:g}/s" if args.rate else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
