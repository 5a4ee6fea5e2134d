"""Peers side by side (issue 21 item 6): one measurement of one side in this process, printed as one JSON line.

``bench/run.py --peers`` runs this file once per (side, measurement), with the project's Python for ``brute_nb``
and with ``bench/.peers-venv``'s for the peers (claudette, chatlas, llm with llm-anthropic, jupyter-ai-magics with
langchain-anthropic and langchain-openai: never dependencies of the project), every side against the same kind of
fake server, started by ``run.py`` in its own process. Each measurement interleaves the side with the baseline a
user would write by hand, in the same process and SDK versions: the sync SDK, streaming (every side here streams
but claudette and jupyter-ai-magics' ``%%ai``), a hand-written payload; the result is the ratio of medians. Each
run is checked: a turn must return the fake server's reply, a loop make every tool call. A side that cannot run
reports its error instead of a time, one that cannot do a measurement says why.

Usage: ``python bench/peers.py SIDE MEASURE KIND BASE_URL API_KEY REPS [TMP]``; MEASURE is ``turn``, ``toolloop``
or ``tools8``; KIND is ``anthropic`` or ``openai``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from handwritten import LOOKUP_ANTHROPIC, LOOKUP_OPENAI, OpenAIStreamed  # bench/ is this script's folder

LOOP_CALLS = 20
TURN_REPLY = "ok, done"  # what run.py's fake server answers each turn
NAP = 0.25


CALLS: list[str] = []  # every tool call a side makes, to check that it ran the whole loop


def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: the key
    """
    CALLS.append(key)
    return f"value of {key}"


def nap(seconds: float) -> str:
    """Sleep (blocking) and say so.

    Args:
        seconds: how long
    """
    time.sleep(seconds)
    CALLS.append("nap")
    return "slept"


# --- the hand-written baseline: the sync SDK, streaming ------------------------------------------------------------

def raw_client(kind: str, base: str, key: str) -> Any:
    if kind == "anthropic":
        import anthropic

        return anthropic.Anthropic(base_url=base, api_key=key, max_retries=0)
    import openai

    return openai.OpenAI(base_url=base + "/v1", api_key=key, max_retries=0)


def raw_turn(kind: str, client: Any, prompt: str = "hello") -> str:
    messages = [{"role": "user", "content": prompt}]
    if kind == "anthropic":
        with client.messages.stream(model="claude-fake", max_tokens=1024, messages=messages) as s:
            return "".join(b.text for b in s.get_final_message().content if b.type == "text")
    text = []
    with client.chat.completions.create(model="gpt-fake", messages=messages, stream=True) as stream:
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                text.append(chunk.choices[0].delta.content)
    return "".join(text)


def raw_loop(kind: str, client: Any, tools: list[Any] | None = None, run: Callable[..., str] = lookup) -> int:
    """The tool loop written by hand; tool calls of one reply run one after another, as a user writes it."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "look up every key"}]
    for n in range(1, 100):
        if kind == "anthropic":
            with client.messages.stream(model="claude-fake", max_tokens=1024, messages=messages,
                                        tools=tools or [LOOKUP_ANTHROPIC]) as s:
                reply = s.get_final_message()
            messages.append({"role": "assistant", "content": reply.content})
            uses = [b for b in reply.content if b.type == "tool_use"]
            if not uses:
                return n
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": b.id, "content": run(**b.input)} for b in uses]})
            continue
        gathered = OpenAIStreamed()
        with client.chat.completions.create(model="gpt-fake", messages=messages, stream=True,
                                            tools=tools or [LOOKUP_OPENAI]) as stream:
            for chunk in stream:
                gathered.add(chunk)
        if not gathered.calls:
            return n
        messages += gathered.answer(run)
    raise RuntimeError("the raw loop did not end")


# --- the sides ----------------------------------------------------------------------------------------------------

class Side:
    """One library's way to do each measured thing (a fresh chat each time: a new conversation)."""

    turn_note = ""
    """Said with the turn's ratio when the side differs from the streaming baseline in kind."""

    def turn(self, kind: str, base: str, key: str) -> Callable[[], str]:
        """One prompt, one reply; the callable returns the reply's text (checked: a side that got none is not fast)."""
        raise NotImplementedError

    def loop(self, kind: str, base: str, key: str, tools: list[Callable[..., str]], prompt: str) -> Callable[[], None]:
        raise NotImplementedError


class BruteNB(Side):
    def __init__(self, tmp: str) -> None:
        import tempfile

        self.tmp, self.n = tempfile.mkdtemp(dir=tmp), 0  # each measurement's chats start with no history

    def _agent(self, kind: str, base: str, key: str, tools: list[Any]) -> Any:
        from brute_nb import agent
        from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop
        from brute_nb.tools import tool

        if not hasattr(self, "provider"):
            from brute_nb.providers.anthropic import AnthropicMessages
            from brute_nb.providers.openai import OpenAIChat

            self.provider = (OpenAIChat("gpt-fake", base_url=base + "/v1", api_key=key, max_retries=0)
                             if kind == "openai" else
                             AnthropicMessages("claude-fake", max_tokens=1024, base_url=base, api_key=key,
                                               max_retries=0))
        self.n += 1
        return (agent().use(SessionLog, path=f"{self.tmp}/brute-{self.n}.jsonl").use(ToolResultLoop)
                .use(DefaultToolPipeline, tools=[tool(t) for t in tools]).run(self.provider))

    def turn(self, kind: str, base: str, key: str) -> Callable[[], str]:
        a = self._agent(kind, base, key, [])
        return lambda: a.start("hello")["messages"][-1].content

    def loop(self, kind: str, base: str, key: str, tools: list[Callable[..., str]], prompt: str) -> Callable[[], None]:
        a = self._agent(kind, base, key, tools)
        return lambda: a.start(prompt)


class Chatlas(Side):
    def _chat(self, kind: str, base: str, key: str) -> Any:
        if kind == "anthropic":
            from chatlas import ChatAnthropic

            return ChatAnthropic(model="claude-fake", api_key=key, kwargs={"base_url": base, "max_retries": 0})
        from chatlas import ChatOpenAI

        return ChatOpenAI(model="gpt-fake", api_key=key, base_url=base + "/v1", kwargs={"max_retries": 0})

    def turn(self, kind: str, base: str, key: str) -> Callable[[], str]:
        chat = self._chat(kind, base, key)
        return lambda: chat.chat("hello", echo="none").get_content()

    def loop(self, kind: str, base: str, key: str, tools: list[Callable[..., str]], prompt: str) -> Callable[[], None]:
        chat = self._chat(kind, base, key)
        for t in tools:
            chat.register_tool(t)
        return lambda: chat.chat(prompt, echo="none")


class Claudette(Side):
    turn_note = "no streaming"

    def _chat(self, kind: str, base: str, key: str, tools: list[Any]) -> Any:
        if kind != "anthropic":
            raise NotImplementedError("claudette speaks only the Anthropic API")
        import anthropic
        from claudette import Chat, Client

        return Chat(cli=Client("claude-fake", cli=anthropic.Anthropic(base_url=base, api_key=key, max_retries=0)),
                    tools=tools or None)

    def turn(self, kind: str, base: str, key: str) -> Callable[[], str]:
        from claudette import contents

        chat = self._chat(kind, base, key, [])
        return lambda: contents(chat("hello"))

    def loop(self, kind: str, base: str, key: str, tools: list[Callable[..., str]], prompt: str) -> Callable[[], None]:
        chat = self._chat(kind, base, key, tools)
        return lambda: list(chat.toolloop(prompt, max_steps=LOOP_CALLS + 5))


class LLM(Side):
    def _model(self, kind: str, base: str, key: str) -> Any:
        if kind == "anthropic":  # the llm-anthropic plugin's model class, as its register_models builds it
            from llm_anthropic import ClaudeMessages

            model = ClaudeMessages("claude-fake", base_url=base)
            model.key = key
            return model
        from llm.default_plugins.openai_models import Chat

        return Chat("gpt-fake", key=key, api_base=base + "/v1", supports_tools=True)

    def turn(self, kind: str, base: str, key: str) -> Callable[[], str]:
        model = self._model(kind, base, key)
        return lambda: model.prompt("hello").text()

    def loop(self, kind: str, base: str, key: str, tools: list[Callable[..., str]], prompt: str) -> Callable[[], None]:
        model = self._model(kind, base, key)
        return lambda: model.conversation().chain(prompt, tools=tools, chain_limit=LOOP_CALLS + 5).text() and None


class JupyterAI(Side):
    """The ``%%ai`` cell magic in a real IPython shell. Its providers are LangChain chat models (``anthropic-chat``
    langchain-anthropic's ChatAnthropic, ``openai-chat`` langchain-openai's ChatOpenAI; a provider-prefixed model id
    is taken as it is), pointed at the fake server by the environment variables they read: ANTHROPIC_BASE_URL
    (ChatAnthropic's ``anthropic_api_url``), OPENAI_BASE_URL (the openai SDK's base URL), and the keys the magic
    requires in the environment. It calls the model's ``generate``: no streaming."""

    ip: Any = None
    turn_note = "no streaming"

    def turn(self, kind: str, base: str, key: str) -> Callable[[], str]:
        import os

        if JupyterAI.ip is None:
            from IPython.core.interactiveshell import InteractiveShell

            os.environ.update({"ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": key,
                               "OPENAI_BASE_URL": base + "/v1", "OPENAI_API_KEY": key})
            JupyterAI.ip = InteractiveShell.instance()
            JupyterAI.ip.run_line_magic("load_ext", "jupyter_ai_magics")
        ip = JupyterAI.ip
        ip.run_line_magic("ai", "reset")  # a new conversation: %%ai sends its transcript with each prompt
        model = "anthropic-chat:claude-fake" if kind == "anthropic" else "openai-chat:gpt-fake"
        # the default format, markdown: the reply comes back as an IPython Markdown display (run_cell_magic returns
        # what a cell would show), its text in .data
        return lambda: str(getattr(ip.run_cell_magic("ai", model, "hello"), "data", None))

    def loop(self, kind: str, base: str, key: str, tools: list[Callable[..., str]], prompt: str) -> Callable[[], None]:
        raise NotImplementedError("%%ai has no tools: one prompt, one reply")


SIDES: dict[str, Callable[[str], Side]] = {"brute_nb": BruteNB, "chatlas": lambda tmp: Chatlas(),
                                           "claudette": lambda tmp: Claudette(), "llm": lambda tmp: LLM(),
                                           "jupyter_ai": lambda tmp: JupyterAI()}


# --- the measurements -----------------------------------------------------------------------------------------------

def checked(fn: Callable[[], Any], calls: int, reply: str | None = None) -> Callable[[], Any]:
    """``fn``, raising unless it made exactly ``calls`` tool calls (a side that stops early is not fast) and, given
    ``reply``, returned that text (a side that got no answer is not fast either)."""
    def run() -> Any:
        CALLS.clear()
        out = fn()
        if len(CALLS) != calls:
            raise RuntimeError(f"made {len(CALLS)} tool calls, not {calls}")
        if reply is not None and (not isinstance(out, str) or reply not in out):
            raise RuntimeError(f"the reply was {out!r:.80}, not {reply!r}")
        return out
    return run


def interleaved(make_ours: Callable[[], Callable[[], Any]], raw: Callable[[], Any], reps: int,
                calls: int = 0, reply: str | None = None) -> dict[str, Any]:
    """``reps`` pairs, order alternating; each of ours on a fresh chat built outside the timed region."""
    raw = checked(raw, calls, reply)
    checked(make_ours(), calls, reply)()  # warm-up: connections, imports
    raw()
    ours_t, raw_t = [], []
    for i in range(reps):
        call = checked(make_ours(), calls, reply)
        for side in (("ours", "raw") if i % 2 else ("raw", "ours")):
            t0 = time.perf_counter()
            call() if side == "ours" else raw()
            (ours_t if side == "ours" else raw_t).append(time.perf_counter() - t0)
    return {"ours_ms": statistics.median(ours_t) * 1000, "raw_ms": statistics.median(raw_t) * 1000,
            "ratio": statistics.median(ours_t) / statistics.median(raw_t)}


def measure(side_name: str, what: str, kind: str, base: str, key: str, reps: int, tmp: str) -> dict[str, Any]:
    side = SIDES[side_name](tmp)
    client = raw_client(kind, base, key)
    if what == "turn":
        result = interleaved(lambda: side.turn(kind, base, key), lambda: raw_turn(kind, client), reps,
                             reply=TURN_REPLY)
        return {**result, "note": side.turn_note} if side.turn_note else result
    if what == "toolloop":
        return interleaved(lambda: side.loop(kind, base, key, [lookup], "look up every key"),
                           lambda: raw_loop(kind, client), reps, calls=LOOP_CALLS)
    if what == "tools8":  # 8 blocking tools in one reply: run together, wall ~ 1x a nap; one by one, 8x
        walls = []
        checked(side.loop(kind, base, key, [nap], "nap 8 times"), 8)()  # warm-up
        for _ in range(reps):
            call = checked(side.loop(kind, base, key, [nap], "nap 8 times"), 8)
            t0 = time.perf_counter()
            call()
            walls.append(time.perf_counter() - t0)
        return {"ours_ms": statistics.median(walls) * 1000, "ratio": statistics.median(walls) / NAP}
    raise ValueError(f"unknown measurement {what!r}")


def main() -> None:
    side, what, kind, base, key, reps = sys.argv[1:7]
    tmp = sys.argv[7] if len(sys.argv) > 7 else "."
    try:
        result = measure(side, what, kind, base, key, int(reps), tmp)
    except NotImplementedError as exc:
        result = {"unsupported": str(exc)}
    except Exception as exc:  # a peer that cannot run against the current SDKs: its error is the result
        last = traceback.extract_tb(exc.__traceback__)[-1]
        result = {"error": f"{type(exc).__name__}: {str(exc)[:240]} (at {last.filename.split('site-packages/')[-1]}"
                           f":{last.lineno})"}
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
