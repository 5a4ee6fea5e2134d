"""Message, ToolCall and Role: Brute's canonical, framework-agnostic conversation values, and the field table every
method of ``Message`` derives from.

They know no wire format, no file and no notebook. The invariant they keep is the seed's round trip:
``Message(**m.to_dict()) == m`` and ``Message.from_json(m.to_json()) == m`` for every message, so the session
file (one ``to_json()`` line per message) reloads losslessly, tool calls included.

Only the value lives here, so every layer can read it cheaply: what a reply reports (RubyLLM's ``cost``, ``parsed``,
``raw``...) ``Message`` inherits from ``brute_nb.reply_readers``; the list that holds messages, ``Log``, is
``brute_nb.log``; "every call answered" is ``brute_nb.sendable``'s. Names that moved out still import from here
(``MOVED``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from operator import attrgetter
from types import MappingProxyType
from typing import Any

from brute_nb import _lazy
from brute_nb.attachments import Attachment
from brute_nb.attachments import attachments as as_attachments
from brute_nb.reply_readers import ReplyReaders

JSON = Any
"""A value that ``json.dumps`` accepts; wire-format dicts are typed with it."""

MOVED = _lazy.exports({
    "brute_nb.log": ("Log", "log", "MessageLike", "new_message_id", "with_id", "_rebuild_log"),
    "brute_nb.prefix_memo": ("Resumed", "keep", "resume", "system_lead"),
    "brute_nb.sendable": ("INTERRUPTED_RESULT", "close_unanswered", "unanswered_calls"),
})
"""Names that moved to a module of their own, by their new home: ``from brute_nb.message import Log`` keeps working
(and a pickled ``Log`` still loads). Forwarded on first use, not imported here: their homes import ``Message``."""


def __getattr__(name: str) -> Any:
    return _lazy.load(__name__, MOVED, name)


INVALID_ARGUMENTS_KEY = "__invalid_json__"
"""When a model sends tool arguments that are not a JSON object, the raw text is kept under this key so the
log stays lossless and the tool pipeline can tell the model what went wrong."""


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


ROLES: tuple[str, ...] = tuple(r.value for r in Role)


_ROLE_NAMED: dict[str, Role] = {r.value: r for r in Role}


def _role(value: object) -> Role:
    if isinstance(value, Role):
        return value
    if isinstance(value, str):
        found = _ROLE_NAMED.get(value.lower())
        if found is not None:
            return found
    raise ValueError(f"unknown message role {value!r}; allowed roles are {', '.join(ROLES)}")


def parse_arguments(raw: object) -> dict[str, JSON]:
    """Turn tool-call arguments as any provider sends them into a dict.

    A JSON-object string is parsed; an empty string or None is ``{}``; anything that is not an object is kept
    verbatim under ``INVALID_ARGUMENTS_KEY`` rather than raising, because a model's typo must not crash a turn.
    """
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str | bytes):
        text = raw.decode() if isinstance(raw, bytes) else raw
        if not text.strip():
            return {}
        try:
            value = json.loads(text)
        except ValueError:
            return {INVALID_ARGUMENTS_KEY: text}
        if isinstance(value, dict):
            return value
        return {INVALID_ARGUMENTS_KEY: text}
    raise TypeError(f"tool-call arguments must be a dict or a JSON object string, not {type(raw).__name__}")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for. ``arguments`` is always a dict (never a JSON string)."""

    id: str
    name: str
    arguments: dict[str, JSON] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.arguments, dict):
            object.__setattr__(self, "arguments", parse_arguments(self.arguments))
        if not isinstance(self.id, str):
            object.__setattr__(self, "id", "" if self.id is None else str(self.id))
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a tool call needs a non-empty string name, got {self.name!r}")

    @property
    def arguments_valid(self) -> bool:
        return INVALID_ARGUMENTS_KEY not in self.arguments

    def to_dict(self) -> dict[str, JSON]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def coerce(cls, value: ToolCall | Mapping[str, Any]) -> ToolCall:
        if isinstance(value, ToolCall):
            return value
        if isinstance(value, Mapping):
            unknown = set(value) - {"id", "name", "arguments"}
            if unknown:
                raise ValueError(f"unknown tool-call fields {sorted(unknown)}; a tool call has id, name, arguments")
            return cls(id=value.get("id", ""), name=value.get("name", ""), arguments=value.get("arguments"))  # type: ignore[arg-type]
        raise TypeError(f"tool_calls entries must be ToolCall or dict, not {type(value).__name__}")


_EMPTY_META: Mapping[str, JSON] = MappingProxyType({})


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True, slots=True)
class MessageField:
    """How one ``Message`` field is written, checked, shown and copied.

    Every method that goes over a message's fields (``to_dict``, ``from_dict``'s checks, ``repr``, ``replace``,
    pickle and deepcopy) loops over ``FIELDS``, so none can leave a field out (the pickle that dropped
    ``attachments`` was such a hand-kept list). The constructor alone names each field, for speed; a test checks
    its parameters are ``FIELDS``.
    """

    name: str
    json: tuple[type, ...]
    """The JSON types a session line may hold for it (anything else is a damaged line, refused by name)."""
    dump: Callable[[Any], JSON] = _same
    show: Callable[[Any], Any] = _same
    """Its value in ``repr``."""
    portable: Callable[[Any], Any] = _same
    """Its value as pickle carries it (a read-only mapping view cannot be pickled)."""
    always: bool = False
    """Written by ``to_dict`` even when it holds its default (the seed's lines always have role and content)."""
    default: Any = None


_NULL = type(None)
FIELDS: tuple[MessageField, ...] = (
    MessageField("role", (str,), dump=lambda r: r.value, show=lambda r: r.value, always=True),
    MessageField("content", (str, _NULL), always=True, default=""),
    MessageField("tool_calls", (list, _NULL), dump=lambda cs: [c.to_dict() for c in cs], show=list),
    MessageField("tool_call_id", (str, _NULL)),
    MessageField("attachments", (list, _NULL), dump=lambda a: [x.to_dict() for x in a],
                 show=lambda a: [x.label for x in a], default=()),
    MessageField("meta", (dict, _NULL), dump=dict, show=dict, portable=dict, default=_EMPTY_META),
)
"""Message's fields in the order a session line writes them; the one list every method derives from."""

FIELD_NAMES = frozenset(f.name for f in FIELDS)
_NAMES = tuple(f.name for f in FIELDS)
_values = attrgetter(*_NAMES)
_WRITE = tuple((f.name, None if f.dump is _same else f.dump, f.always, f.default) for f in FIELDS)
"""FIELDS as ``to_dict`` walks them, once per line written."""
_set = object.__setattr__
_new = object.__new__


def _meta_view(meta: Mapping[str, JSON] | None) -> Mapping[str, JSON]:
    """A message's ``meta`` as it holds it: a read-only view of its own copy (a view given is kept)."""
    return _EMPTY_META if not meta else meta if meta.__class__ is MappingProxyType else MappingProxyType(dict(meta))


@dataclass(frozen=True, slots=True, init=False)
class Message(ReplyReaders):
    """An immutable conversation entry. ``meta`` carries what a provider reported (model, tokens, timing), which
    RubyLLM's readers (``cost``, ``usage``, ``parsed``, ``raw``...: ``brute_nb.reply_readers``) read.

    Its fields are declared in ``FIELDS``; the annotations below are what mypy and readers see of them.
    """

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] | None
    tool_call_id: str | None
    attachments: tuple[Attachment, ...]
    """Files sent with the message (images, plots, PDFs); see ``brute_nb.attachments``."""
    meta: Mapping[str, JSON]

    def __init__(
        self,
        role: Role | str,
        content: str | None = "",
        tool_calls: Iterable[ToolCall | Mapping[str, Any]] | None = None,
        tool_call_id: str | None = None,
        meta: Mapping[str, JSON] | None = None,
        attachments: Iterable[Any] | None = None,
    ) -> None:
        # One line a field rather than a loop over FIELDS: a session loads tens of thousands of messages at once.
        _set(self, "role", role if role.__class__ is Role else _role(role))
        if content.__class__ is not str:
            if content is not None and not isinstance(content, str):
                raise TypeError(f"message content must be a string, not {type(content).__name__}")
            content = content or ""
        _set(self, "content", content)
        _set(self, "tool_calls", None if tool_calls is None else tuple(ToolCall.coerce(c) for c in tool_calls))
        if tool_call_id is not None and not isinstance(tool_call_id, str):
            raise TypeError(f"tool_call_id must be a string, not {type(tool_call_id).__name__}")
        _set(self, "tool_call_id", tool_call_id)
        _set(self, "attachments", as_attachments(attachments) if attachments else ())
        _set(self, "meta", _meta_view(meta))

    @property
    def has_tool_calls(self) -> bool:
        return bool(self.tool_calls)

    def __repr__(self) -> str:
        written = self.to_dict()  # repr shows the fields a session line would hold
        shown = (f"{f.name}={f.show(getattr(self, f.name))!r}" for f in FIELDS if f.name in written)
        return f"Message({', '.join(shown)})"

    def to_dict(self) -> dict[str, JSON]:
        """A plain, JSON-ready dict in field order, with None fields and empty meta dropped."""
        out: dict[str, JSON] = {}
        for (name, dump, always, default), value in zip(_WRITE, _values(self), strict=True):
            if always or (value is not default and value != default):
                out[name] = value if dump is None else dump(value)
        return out

    def to_json(self) -> str:
        """One compact JSONL line, byte for byte the seed's format (no spaces, non-ASCII kept)."""
        return dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """A message from its JSON form, which must have exactly the JSON types ``to_dict`` writes.

        The constructor is lenient with Python callers (any iterable of calls, any mapping as meta); a session
        line is not: ``tool_calls={}`` or ``meta`` as a list of pairs is a damaged line, refused by name.
        """
        unknown = set(data) - FIELD_NAMES
        if unknown:
            raise ValueError(f"unknown message fields {sorted(unknown)}")
        if "role" not in data:
            raise ValueError("a message needs a 'role'")
        problems = _json_type_problems(data)
        if problems:
            raise ValueError("; ".join(problems))
        return cls(**data)

    @classmethod
    def from_json(cls, line: str | bytes) -> Message:
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError(f"a message line must be a JSON object, not {type(data).__name__}")
        return cls.from_dict(data)

    @classmethod
    def coerce(cls, value: object) -> Message:
        """A ``Message`` from what a log may be handed: a message, its dict form, or another library's message
        object with ``role`` and ``content`` (and ``tool_calls``/``tool_call_id``/``meta`` if it has them)."""
        if isinstance(value, Message):
            return value
        if isinstance(value, Mapping):
            return cls.from_dict(value)
        if hasattr(value, "role") and hasattr(value, "content"):
            found = {f.name: getattr(value, f.name, None) for f in FIELDS}
            return cls(**{name: v for name, v in found.items() if v is not None})
        raise TypeError(f"a log holds messages: got a {type(value).__name__} (give a brute_nb.Message, its dict "
                        "form, or an object with role and content)")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle and ``copy.deepcopy`` rebuild through the constructor, every field in ``FIELDS`` carried."""
        return (_rebuild_message, tuple(f.portable(v) for f, v in zip(FIELDS, _values(self), strict=True)))

    def replace(self, **changes: Any) -> Message:
        """A copy with some fields changed (the value itself never changes)."""
        if not changes.keys() <= FIELD_NAMES:
            unknown = sorted(changes.keys() - FIELD_NAMES)
            raise TypeError(f"Message has no field(s) {unknown}; its fields are {list(_NAMES)}")
        if len(changes) == 1 and "meta" in changes:
            # The common copy (a reply's report, an id): the other fields were checked when this message was made,
            # so they are carried over as they are, not coerced again.
            copy: Message = _new(Message)
            for name, value in zip(_NAMES, _values(self), strict=True):
                _set(copy, name, value)
            _set(copy, "meta", _meta_view(changes["meta"]))
            return copy
        fields = dict(zip(_NAMES, _values(self), strict=True))
        fields.update(changes)
        return Message(**fields)

    def with_meta(self, **meta: JSON) -> Message:
        return self.replace(meta={**self.meta, **meta})

    def tool_results(self, messages: Iterable[Message]) -> list[Message]:
        """The results in ``messages`` that answer this message's calls, in log order."""
        ids = {c.id for c in self.tool_calls or ()}
        return [m for m in messages if ids and m.tool_call_id in ids]

    def cache_until_here(self) -> Message:
        """A copy marked as a prompt-cache boundary: the conversation up to here is the prefix to cache."""
        return self.with_meta(cache_until_here=True)


def _rebuild_message(*values: Any) -> Message:
    return Message(**dict(zip(_NAMES, values, strict=True)))


def _json_type_problems(data: Mapping[str, Any]) -> list[str]:
    """Fields of a message's JSON form whose type is not the one ``to_dict`` writes."""
    problems = []
    names = {str: "a string", list: "a list", dict: "an object", _NULL: "null"}
    for f in FIELDS:
        if f.name in data and not isinstance(data[f.name], f.json):
            want = " or ".join(names[t] for t in f.json)
            problems.append(f"{f.name!r} must be {want}, not {_json_name(data[f.name])}")
    for i, c in enumerate(data.get("tool_calls") or () if isinstance(data.get("tool_calls"), list) else ()):
        if not isinstance(c, dict):
            problems.append(f"tool_calls[{i}] must be an object with id, name and arguments, not {_json_name(c)}")
        elif not isinstance(c.get("id", ""), str) or not isinstance(c.get("name"), str):
            problems.append(f"tool_calls[{i}]: 'id' and 'name' must be strings")
        elif not isinstance(c.get("arguments", {}), dict | str | type(None)):
            problems.append(f"tool_calls[{i}].arguments must be an object, not {_json_name(c['arguments'])}")
    return problems


def _json_name(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
            type(None): "null"}.get(type(value), type(value).__name__)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""One encoder for every line: ``json.dumps`` with options builds a new one per call (a line per message)."""


def dumps(value: JSON) -> str:
    """Compact JSON as Brute writes it: no spaces, non-ASCII kept."""
    return _ENCODER.encode(value)


def role_of(message: Any) -> str:
    """The role of any message-like object as a plain lower-case string."""
    r = message.role
    if r.__class__ is Role:
        return r._value_  # ``.value`` is an enum property, twice as slow, and this runs per message per call
    return r.value if isinstance(r, Role) else str(r).lower()
