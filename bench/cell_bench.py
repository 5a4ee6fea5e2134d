"""A short cell (issue 29 §1): IOPub messages, wall time and kernel CPU of a one-line ``%%brute`` reply in a real
kernel, against the cells a user writes by hand with the ``anthropic`` SDK's ``messages.create`` and a ``print``:

- **raw** (the issue's baseline, judged by its targets): one message, no system prompt, no tools, no history;
- **chat** (like for like, item 7's "the baseline a user would write" for a conversation): a hand-written chat
  cell that keeps its conversation in a list it appends to, and sends the system prompt and tool schemas the
  ``%%brute`` cell sent (copied from the fake's record of that request). What it still does not do: stream (the
  ``%%brute`` cell streams for its live view), write a session file, price the reply, render Markdown.

    .venv/bin/python bench/cell_bench.py            # 40 cells a side, interleaved
    .venv/bin/python bench/cell_bench.py --cells 10
    .venv/bin/python bench/cell_bench.py --cells 10 --project   # AGENTS.md, skills, pandas in the kernel

One kernel, one loopback ``FakeProvider`` (keep-alive) answering every request with a one-line reply. After a warm-up
of each side (imports, the first connection, the first widget), the cells take turns, each side first as often
(the chat and ``%%brute`` conversations grow by one exchange a turn, alike). A second subscriber on the
kernel's IOPub socket counts each cell's messages by type. Wall time is execute request -> the cell's ``idle``
status on IOPub; CPU is the kernel process's user+system time; the request row is the body each cell sent the
model (what the fake recorded), the measured why of most of the gap. Nothing asserts: it prints rows (median ratios).
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.stream_bench import IOPubTap, kernel_env, run_cell  # noqa: E402

RAW_CELL = """\
import anthropic
_client = anthropic.Anthropic(base_url={base!r}, api_key={key!r}, max_retries=0)
print(_client.messages.create(model="claude-fake", max_tokens=1024,
                              messages=[{{"role": "user", "content": "hi"}}]).content[0].text)
"""
RAW_REUSE = """\
print(_client.messages.create(model="claude-fake", max_tokens=1024,
                              messages=[{{"role": "user", "content": "hi"}}]).content[0].text)
"""
CHAT_SETUP = """\
import json
_system = json.loads({system!r})
_tools = json.loads({tools!r})
_chat = []
"""
CHAT_CELL = """\
_chat.append({"role": "user", "content": "hi"})
_reply = _client.messages.create(model="claude-fake", max_tokens=1024, system=_system, tools=_tools, messages=_chat)
_chat.append({"role": "assistant", "content": _reply.content})
print(_reply.content[0].text)
"""
BRUTE_CELL = "%%brute\nhi"
REPLY = "Hello! How can I help you today?"


PROJECT_FILES = {
    "AGENTS.md": "# Rules\n" + "- Use pandas; never loop over a DataFrame's rows.\n" * 24,
    "CLAUDE.md": "Plots go in plots/, one figure a file.\n" * 8,
    **{f".brute/skills/{name}/SKILL.md": f"---\ndescription: {name} the way this project does it\n---\n# {name}\n"
       + "A step of the skill.\n" * 20 for name in ("clean-csv", "plot", "sql")},
}
PROJECT_CELL = "import numpy as np, pandas as pd\nsales = pd.DataFrame({'region': ['n', 's'] * 50, 'x': range(100)})"


def write_project(folder: Path) -> None:
    """A data project's notebook folder: rules files and skills the system prompt reads each turn."""
    for name, text in PROJECT_FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def measure(cells: int, project: bool = False) -> dict[str, Any]:
    import psutil
    from jupyter_client.manager import start_new_kernel

    from brute_nb.testing import FakeProvider

    with FakeProvider(keep_alive=True) as fake, tempfile.TemporaryDirectory() as tmp:
        if project:
            write_project(Path(tmp))
        km, kc = start_new_kernel(kernel_name="python3", cwd=tmp, env=kernel_env(fake))
        tap = IOPubTap(km)
        sides: dict[str, dict[str, list[float]]] = {
            s: {"wall": [], "cpu": [], "messages": [], "bytes": [], "request": []} for s in SIDES}
        types: dict[str, collections.Counter[str]] = {}
        try:
            proc = psutil.Process(km.provisioner.pid)
            time.sleep(0.5)
            run_cell(kc, tap, "%load_ext brute_nb", 60)
            if project:
                run_cell(kc, tap, PROJECT_CELL, 120)
            for _ in range(2):
                fake.add(REPLY)
                run_cell(kc, tap, RAW_CELL.format(base=fake.base_url, key=fake.api_key), 60)
                fake.add(REPLY)
                run_cell(kc, tap, BRUTE_CELL, 60)
            sent = fake.requests[-1]["json"]  # the %%brute cell's request: its system prompt and tools, as on the wire
            run_cell(kc, tap, CHAT_SETUP.format(system=json.dumps(sent.get("system", "")),
                                                tools=json.dumps(sent.get("tools", []))), 60)
            for _ in range(2):  # as many exchanges as the %%brute session holds by now
                fake.add(REPLY)
                run_cell(kc, tap, CHAT_CELL, 60)
            codes = {"raw": RAW_REUSE.format(), "chat": CHAT_CELL, "brute": BRUTE_CELL}
            for i in range(cells * len(SIDES)):
                turn, at = divmod(i, len(SIDES))
                side = SIDES[(at + turn) % len(SIDES)]  # the order rotates: each side goes first as often
                code = codes[side]
                fake.add(REPLY)
                cpu0 = kernel_cpu(proc)
                t0 = time.perf_counter()
                msg_id = run_cell(kc, tap, code, 60)
                t1 = max(t for t, parent, _ in tap.seen if parent == msg_id)
                s = sides[side]
                s["wall"].append(t1 - t0)
                s["cpu"].append(kernel_cpu(proc) - cpu0)
                s["messages"].append(tap.count[msg_id])
                s["bytes"].append(tap.bytes[msg_id])
                s["request"].append(len(json.dumps(fake.requests[-1]["json"], separators=(",", ":"))))
                types[side] = collections.Counter(
                    _kind(content) for _, parent, content in tap.seen if parent == msg_id)
        finally:
            tap.close()
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    return {"sides": sides, "types": types}


SIDES = ("raw", "chat", "brute")
PRECISE = Path("/proc/self/task").is_dir()
CPU_NOTE = ("median (every kernel thread's time on a CPU, /proc schedstat, ns)" if PRECISE
            else "mean (psutil counts 10 ms ticks)")


def kernel_cpu(proc: Any) -> float:
    """Seconds the kernel process has run on a CPU, all threads. psutil's user+system time moves in 10 ms ticks, as
    long as a whole short cell; Linux's schedstat counts nanoseconds, so one cell's CPU can be read on its own."""
    if not PRECISE:
        return float(sum(proc.cpu_times()[:2]))
    total = 0
    for task in Path(f"/proc/{proc.pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended between the listing and the read
    return total / 1e9


def _kind(content: bytes) -> str:
    data = json.loads(content)
    if "execution_state" in data:
        return f"status:{data['execution_state']}"
    if "comm_id" in data:
        method = (data.get("data") or {}).get("method")
        return f"comm:{method}" if method else ("comm_open" if "target_name" in data else "comm_msg")
    if "data" in data:
        shown = ",".join(k for k, v in sorted(data["data"].items()) if v)
        return f"display:{shown or 'empty'}" + ("+id" if data.get("transient", {}).get("display_id") else "")
    if "name" in data and "text" in data:
        return f"stream:{data['name']}"
    return "other:" + ",".join(sorted(data))[:40]


def report(result: dict[str, Any]) -> str:
    sides = result["sides"]

    n = len(sides["raw"]["wall"])
    lines = [f"{n} short cells a side, interleaved; a one-line reply ({len(REPLY)} characters)", "",
             "| measure | raw SDK cell | chat cell | %%brute | ratio to raw | target | met? | ratio to chat |",
             "|---|---|---|---|---|---|---|---|"]
    for key, label, fmt, target in (("wall", "wall time (ms), median", ".1f", 1.3),
                                    ("cpu", f"kernel CPU (ms), {CPU_NOTE}", ".1f", 1.3),
                                    ("messages", "IOPub messages", ".0f", 2.0), ("bytes", "IOPub bytes", ",.0f", None),
                                    ("request", "request body sent to the model (bytes, compact JSON)", ",.0f", None)):
        scale = 1000 if key in ("wall", "cpu") else 1
        pick = statistics.mean if key == "cpu" and not PRECISE else statistics.median
        a, c, b = (pick(sides[side][key]) * scale for side in SIDES)
        ratio = b / a if a else float("nan")
        met = "" if target is None else ("yes" if ratio <= target else "**NO**")
        lines.append(f"| {label} | {a:{fmt}} | {c:{fmt}} | {b:{fmt}} | {ratio:.2f}x "
                     f"| {'' if target is None else f'<= {target}x'} | {met} | {b / c if c else float('nan'):.2f}x |")
    for side in SIDES:
        lines.append(f"\n{side}: " + ", ".join(f"{k} {v}" for k, v in sorted(result["types"][side].items())))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", type=int, default=40)
    parser.add_argument("--project", action="store_true",
                        help="a data project's notebook: AGENTS.md, CLAUDE.md, three skills, pandas imported")
    args = parser.parse_args()
    heading = "A data project's notebook (--project)\n\n" if args.project else ""
    print(heading + report(measure(args.cells, args.project)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
