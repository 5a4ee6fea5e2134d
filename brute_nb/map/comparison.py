"""``brute_nb.compare(session_or_map_result, models=[...])``: the same work on other models, side by side.

A session (a name, a session file, or ``brute_nb.current()``) is replayed turn by turn: each model gets the user's
prompts in order, in a conversation of its own that it carries on with its own replies
(``<stem>.brute/compare/<run>/<model>.jsonl``). A map's result frame is replayed row by row: each row's prompt, read
from its session, runs through ``map``'s own engine on each model (its cache, limiter and ``confirm_above``). Either
way every answer is written as it arrives and a re-run reads it back, so running the cell again asks for nothing.

The invariants it keeps by calling, not repeating, their homes: a session or row file is read only from inside the
notebook's folder, never through a link out (``confine``, via ``read_session``'s root); what is sent passes the
providers' ``sendable`` like every turn; each key goes only to its own provider's host (the providers'
credentials). Tools that write are refused: each model would change the user's files in turn.
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brute_nb.errors import BruteError, SettingsError
from brute_nb.map import context as contexts
from brute_nb.map.comparison_frame import ORIGINAL, Turn, side_by_side, turns, user_turns
from brute_nb.map.context import MapContext, Select, read_tools
from brute_nb.map.spec import Job, digest, row_key
from brute_nb.message import Message
from brute_nb.providers import profiles
from brute_nb.sessions.names import check_session_name

if TYPE_CHECKING:
    import pandas as pd

READ_ONLY_SPECS = ("none", "read-only")


def compare(source: Any, models: list[Any] | tuple[Any, ...], *, system: str | None = None, tools: str = "none",
            name: str | None = None, concurrency: int = 8, max_iterations: int = 20, progress: bool = True,
            confirm_above: float | str | None = None, schema: Any = None,
            context: MapContext | None = None) -> pd.DataFrame:
    """``source`` (a session name or file, ``brute_nb.current()``, or a ``brute_nb.map`` result) replayed on each
    of ``models`` (``provider:model`` names or providers); one row per turn (or map row), a ``(field, model)``
    column per model with the original first: reply, tool calls, tokens, cost, seconds, error, and ``diff``.

    ``system`` is the models' system prompt (the kernel agent's is rebuilt at every turn from the notebook, so it is
    not replayed); ``schema`` asks a map's rows for the same pydantic model as the original map did. ``context``:
    where the sessions are and the defaults (``map.context``; in a kernel, its settings and notebook folder)."""
    import pandas as pd

    labels = _check(models, tools)
    ctx = contexts.given(context)
    if isinstance(source, pd.DataFrame):
        return _compare_map(source, models, labels, system=system, tools=tools, name=name, concurrency=concurrency,
                            max_iterations=max_iterations, progress=progress, confirm_above=confirm_above,
                            schema=schema, context=ctx)
    if schema is not None:
        raise SettingsError("compare(): schema= is for a map result's rows; a session's turns are replayed as text")
    return _compare_session(source, models, labels, system=system, tools=tools, name=name,
                            max_iterations=max_iterations, context=ctx)


def _check(models: Any, tools: str) -> list[str]:
    problems = []
    items = list(models) if isinstance(models, list | tuple) else []
    if not items:
        problems.append("models= takes a list of 'provider:model' names or providers, e.g. "
                        f"{[profiles.FAST_MODEL, profiles.model_examples()[1]]}")
    if any(not isinstance(m, str) and not hasattr(m, "label") for m in items):
        problems.append("each model is a 'provider:model' name or a provider (brute_nb.providers.auto(...))")
    pasted = next((p for p in map(profiles.key_like, items) if p is not None), None)
    if pasted is not None:  # a model's name heads its columns: the key would show in the frame
        problems.append(profiles.pasted_key("a model given", pasted))
    if tools not in READ_ONLY_SPECS:
        problems.append(f"tools={tools!r}: compare runs the same turns once per model, so tools that write would "
                        "change your files once for each; use tools='none' or 'read-only'")
    if problems:
        raise SettingsError("compare(): " + "; ".join(problems))
    labels = [m if isinstance(m, str) else str(m.label) for m in items]
    if len(set(labels)) != len(labels):
        raise SettingsError(f"compare(): a model is named twice ({', '.join(labels)})")
    return labels


def read_conversation(path: Path, root: Path) -> list[Message]:
    """A session or row file, read only from inside ``root`` (a link out, a FIFO or a huge file is refused)."""
    from brute_nb.sessions.file import read_session

    if not Path(path).exists() and not Path(path).is_symlink():
        raise BruteError(f"compare(): {path} does not exist; name a session of this notebook or its file")
    return read_session(path, root=root)


def session_file(source: Any, context: MapContext) -> Path:
    """The session file ``source`` names: an agent's own, a session name beside the notebook, or a path."""
    if hasattr(source, "session_path"):
        return Path(source.session_path)
    if isinstance(source, str) and "/" not in source and not source.endswith(".jsonl"):
        return context.sessions / f"{check_session_name(source)}.jsonl"
    if isinstance(source, str | os.PathLike):
        return Path(os.path.expanduser(os.fspath(source))).absolute()
    raise SettingsError(f"compare() takes a session (a name, a file, brute_nb.current()) or a brute_nb.map result, "
                        f"got {type(source).__name__}")


def _compare_session(source: Any, models: Any, labels: list[str], *, system: str | None, tools: str,
                     name: str | None, max_iterations: int, context: MapContext) -> pd.DataFrame:
    from brute_nb.event_loop import run_sync

    root = context.folder  # every file compare reads or writes stays inside the notebook's folder
    original = read_conversation(session_file(source, context), root)
    prompts = user_turns(original)
    if not prompts:
        raise BruteError("compare(): the session has no user turns to replay")
    run = check_session_name(name) if name else "compare-" + digest([prompts, system, tools])[:12]
    folder = context.sessions / "compare" / run
    columns: dict[str, list[Turn]] = {ORIGINAL: _padded(turns(original), len(prompts))}
    for model, label in zip(models, labels, strict=True):
        path = folder / f"{digest(label)}.jsonl"
        try:
            messages = run_sync(partial(replay_turns, model, prompts, path, root=root, system=system, tools=tools,
                                        max_iterations=max_iterations, select=context.select))
            columns[label] = _padded(turns(messages), len(prompts))
        except BruteError as exc:  # this model failed; the others still show (what it answered is kept)
            from brute_nb.sessions.file import read_session

            done = _padded(turns(read_session(path, root=root)), len(prompts))
            columns[label] = [t if t.reply is not None else replace(t, error=str(exc)) for t in done]
    import pandas as pd

    return side_by_side(pd.RangeIndex(1, len(prompts) + 1, name="turn"), columns)


def _padded(found: list[Turn], n: int) -> list[Turn]:
    return (found + [Turn(error="not run")] * n)[:n]


async def replay_turns(model: Any, prompts: list[str], path: Path, *, root: Path, system: str | None, tools: str,
                       max_iterations: int, select: Select = read_tools) -> list[Message]:
    """``prompts`` as one conversation on ``model``, saved at ``path``; what is saved already is not asked again."""
    from brute_nb.map.row import finished, row_stack
    from brute_nb.providers import auto
    from brute_nb.sessions.file import read_session

    provider = auto(model) if isinstance(model, str) else model
    path.parent.mkdir(parents=True, exist_ok=True)
    agent = row_stack(provider, path, home=root, system=system, tools=select(tools), max_iterations=max_iterations)
    history = read_session(path, root=root)
    asked = len(user_turns(history))
    if history and not finished(history):
        await agent.astart(None, root=str(root))  # a turn cut off (an interrupt) is carried on, not asked again
    for prompt in prompts[asked:]:
        await agent.astart(prompt, root=str(root))
    return read_session(path, root=root)


def _compare_map(frame: pd.DataFrame, models: Any, labels: list[str], *, system: str | None, tools: str,
                 name: str | None, concurrency: int, max_iterations: int, progress: bool,
                 confirm_above: float | str | None, schema: Any, context: MapContext) -> pd.DataFrame:
    import pandas as pd

    from brute_nb.map.api import ceiling, execute, settle

    if "session" not in frame.columns:
        raise SettingsError("compare() takes a brute_nb.map result (it has a 'session' column, each row's "
                            "conversation) or a session")
    root = context.folder
    originals = [read_conversation(Path(p), root) if isinstance(p, str) and p else [] for p in frame["session"]]
    prompts = [next(iter(user_turns(m)), None) for m in originals]
    columns: dict[str, list[Turn]] = {ORIGINAL: [next(iter(turns(m)), Turn(error="no session: the row was not run"))
                                                 for m in originals]}
    asked = [i for i, p in enumerate(prompts) if p is not None]
    rows = pd.DataFrame({"prompt": [prompts[i] for i in asked]})
    limit = ceiling(confirm_above, context)
    for model, label in zip(models, labels, strict=True):
        spec, provider = settle("{prompt}", rows, schema=schema, tools=tools, model=model, system=system,
                                name=f"{name or 'compare'}-{digest(label)[:8]}", root=None,
                                max_iterations=max_iterations, cache=True, backend="local", concurrency=concurrency,
                                context=context)
        positions, jobs = _exact(spec, [prompts[i] or "" for i in asked])
        result = execute(spec, rows, positions, jobs, provider=provider, context=context,
                         concurrency=int(concurrency), progress=progress, limit=limit)
        answered = [Turn(error="no session: the row was not run")] * len(prompts)
        for at, (session, error) in zip(asked, zip(result["session"], result["error"], strict=True), strict=True):
            found = turns(read_conversation(Path(session), root)) if isinstance(session, str) else []
            turn = found[0] if found else Turn()
            answered[at] = replace(turn, error=error if isinstance(error, str) else None)
        columns[label] = answered
    return side_by_side(frame.index, columns)


def _exact(spec: Any, prompts: list[str]) -> tuple[dict[str, list[int]], list[Job]]:
    """``map.plan`` for prompts taken as they are (a template would bound and re-fill them)."""
    identity = spec.identity()
    positions: dict[str, list[int]] = {}
    jobs: list[Job] = []
    for i, prompt in enumerate(prompts):
        key = row_key(identity, {"prompt": prompt})
        if key in positions:
            positions[key].append(i)
        else:
            positions[key] = [i]
            jobs.append(Job(i, key, prompt))
    return positions, jobs
