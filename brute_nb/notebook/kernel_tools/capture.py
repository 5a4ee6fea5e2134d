"""What code run for the agent shows, captured per thread: its stdout and stderr, and what it publishes through
IPython's display machinery (``display(df)``, ``Image``, ``HTML``, ``Markdown``, a figure ``plt.show`` displays).

Only the capturing thread's output is taken. Stand-ins on ``sys.stdout``/``sys.stderr`` and around the shell's
display publisher send a capturing thread's writes and publishes to its ``Capture`` and everyone else's to what
they stood in for, so a cell the user runs meanwhile and brute_nb's own live view of the ``%%brute`` cell (updated
from the turn's thread) print and display as before. The stand-ins are installed on first use and removed when no
thread captures; one that finds itself replaced (IPython's ``capture_output`` swaps the publisher for its block)
leaves the replacement alone.

What a capture holds is what a front end would show, in order: ``clear_output`` from the capturing thread clears
what it showed so far (with ``wait=True``, when its next output arrives), and an update of a display it made
(``display_id``) replaces that display's content; an update of a display made elsewhere goes on to the output it
names.
"""

from __future__ import annotations

import base64
import io
import sys
import threading
from dataclasses import dataclass, field, replace
from typing import Any, TextIO


@dataclass
class Display:
    """One display: its mime bundle (binary values as base64 text, as Jupyter sends them) and its metadata."""

    data: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    after: tuple[int, int] = (0, 0)
    """How many characters of stdout and of stderr were shown before it, so saved outputs keep their order."""


@dataclass
class _Text:
    name: str
    buffer: io.StringIO


_captures: dict[int, Capture] = {}
"""The capturing threads, by ident: every stand-in routes through this one table."""
_install_lock = threading.Lock()


class Capture:
    """Captures this thread's stdout, stderr and displays; installs the stand-ins on first use, removes them when
    no thread captures."""

    def __init__(self) -> None:
        self._shown: list[_Text | Display] = []
        self._ids: dict[str, Display] = {}
        self._clear_pending = False
        self._shell: Any = None

    def __enter__(self) -> Capture:
        with _install_lock:
            for attr in ("stdout", "stderr"):
                if not isinstance(getattr(sys, attr), _Router):
                    setattr(sys, attr, _Router(getattr(sys, attr), attr))
            self._shell = _shell()
            if self._shell is not None and not isinstance(self._shell.display_pub, _DisplayRouter):
                self._shell.display_pub = _DisplayRouter(self._shell.display_pub)
            _captures[threading.get_ident()] = self
        return self

    def __exit__(self, *exc: object) -> None:
        with _install_lock:
            _captures.pop(threading.get_ident(), None)
            if _captures:
                return
            for attr in ("stdout", "stderr"):
                stream = getattr(sys, attr)
                if isinstance(stream, _Router):
                    setattr(sys, attr, stream.original)
            publisher = getattr(self._shell, "display_pub", None)
            if isinstance(publisher, _DisplayRouter):
                self._shell.display_pub = publisher.original

    def write(self, name: str, text: str) -> int:
        if not text:
            return 0
        self._settle()
        last = self._shown[-1] if self._shown else None
        if isinstance(last, _Text) and last.name == name:
            return last.buffer.write(text)
        buffer = io.StringIO()
        self._shown.append(_Text(name, buffer))
        return buffer.write(text)

    def display(self, data: dict[str, Any], metadata: dict[str, Any] | None, transient: dict[str, Any] | None,
                update: bool) -> bool:
        """Keep a publish; False for an update of a display this capture did not make (it goes on)."""
        display_id = (transient or {}).get("display_id")
        if update:
            made = self._ids.get(str(display_id)) if display_id is not None else None
            if made is None:
                return False
            made.data, made.metadata = _json_ready(data), dict(metadata or {})
            return True
        self._settle()
        shown = Display(_json_ready(data), dict(metadata or {}))
        self._shown.append(shown)
        if display_id is not None:
            self._ids[str(display_id)] = shown
        return True

    def clear(self, wait: bool) -> None:
        self._clear_pending = True
        if not wait:
            self._settle()

    def _settle(self) -> None:
        if self._clear_pending:
            self._shown.clear()
            self._clear_pending = False

    @property
    def out(self) -> str:
        return "".join(p.buffer.getvalue() for p in self._shown if isinstance(p, _Text) and p.name == "stdout")

    @property
    def err(self) -> str:
        return "".join(p.buffer.getvalue() for p in self._shown if isinstance(p, _Text) and p.name == "stderr")

    @property
    def displays(self) -> list[Display]:
        """The displays in order, each with how much text came before it."""
        sizes = {"stdout": 0, "stderr": 0}
        found = []
        for piece in self._shown:
            if isinstance(piece, _Text):
                sizes[piece.name] += len(piece.buffer.getvalue())
            else:
                found.append(replace(piece, after=(sizes["stdout"], sizes["stderr"])))
        return found


def _json_ready(data: dict[str, Any]) -> dict[str, Any]:
    # A PNG formatter may return raw bytes; Jupyter's wire (and nbformat) carry them as base64 text.
    return {str(mime): base64.b64encode(bytes(value)).decode("ascii")
            if isinstance(value, bytes | bytearray | memoryview) else value for mime, value in data.items()}


def _shell() -> Any:
    """The running IPython shell, whose publisher ``display()`` uses; None outside IPython (``display`` prints)."""
    module = sys.modules.get("IPython.core.interactiveshell")
    if module is None or not module.InteractiveShell.initialized():
        return None
    return module.InteractiveShell.instance()


class _Router(io.TextIOBase):
    """Stands in for ``sys.stdout``/``sys.stderr``: writes from a capturing thread go to its capture."""

    def __init__(self, original: TextIO, channel: str) -> None:
        self.original = original
        self.channel = channel

    def write(self, text: str) -> int:
        capture = _captures.get(threading.get_ident())
        if capture is None:
            return self.original.write(text)
        return capture.write(self.channel, text)

    def flush(self) -> None:
        if threading.get_ident() not in _captures:
            self.original.flush()

    def close(self) -> None:
        """Closes nothing: the router owns no stream. ``IOBase.__del__`` calls ``close`` when a router is collected,
        which may be long after the stream it stood in for was closed (pytest's capture, a finished cell's), and
        ``IOBase.close`` would flush that closed stream and raise in the collector."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


class _DisplayRouter:
    """Stands in for the shell's display publisher: a capturing thread's publishes and ``clear_output`` go to its
    capture. Everything else (the kernel setting its parent header, its session) reaches the publisher itself."""

    def __init__(self, original: Any) -> None:
        object.__setattr__(self, "original", original)

    def publish(self, data: dict[str, Any], metadata: dict[str, Any] | None = None, *args: Any,
                **kwargs: Any) -> None:
        capture = _captures.get(threading.get_ident())
        if capture is None or not capture.display(data, metadata, kwargs.get("transient"),
                                                  bool(kwargs.get("update", False))):
            self.original.publish(data, metadata, *args, **kwargs)

    def clear_output(self, wait: bool = False) -> None:
        capture = _captures.get(threading.get_ident())
        if capture is None:
            self.original.clear_output(wait)
        else:
            capture.clear(wait)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.original, name, value)
