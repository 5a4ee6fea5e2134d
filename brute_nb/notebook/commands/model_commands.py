"""``%brute alias``, ``%brute keys``, ``%brute models`` and ``%brute plugins``: naming models, keeping their keys
and looking at what this environment can reach.

Kept out of ``magics`` (which only parses and dispatches). Output is plain text printed in the cell.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

ALIAS_USAGE = ("usage: %brute alias                      list aliases\n"
               "       %brute alias NAME PROVIDER:MODEL   save one (then -m NAME)\n"
               "       %brute alias --delete NAME         remove one")


def alias(rest: list[str]) -> None:
    from brute_nb.notebook.settings import parse_model
    from brute_nb.providers import aliases, profiles

    if not rest:
        saved = aliases.load()
        print(f"aliases in {aliases.path()}:")
        for name, target in sorted(saved.items()):
            print(f"  {name:<16} {target}")
        if not saved:
            print(f"  (none yet; e.g. %brute alias fast {profiles.FAST_MODEL})")
        return
    if rest[0] == "--delete" and len(rest) == 2:
        aliases.save(rest[1], None)
        print(f"alias {rest[1]} removed")
        return
    if len(rest) != 2 or rest[0].startswith("-"):
        raise UsageError(ALIAS_USAGE)
    target = parse_model(rest[1])  # a typo is refused now, not at the turn that uses the alias
    aliases.save(rest[0], target)
    print(f"alias {rest[0]} -> {target}  (use it as -m {rest[0]}; saved in {aliases.path()})")


def keys(rest: list[str]) -> None:
    """``%brute keys``: as ``brute-nb keys`` in a terminal; the key is asked with a hidden prompt (``getpass``,
    which ipykernel answers with a password box in the cell), never typed into the notebook."""
    import getpass

    from brute_nb.notebook.approvals import stdin_available
    from brute_nb.providers.catalog import keys_command

    def ask(prompt: str) -> str:
        if not stdin_available():
            raise UsageError(f"no one can answer a prompt here (a notebook run headless): run brute-nb keys set "
                             f"{rest[-1]} in a terminal instead")
        return getpass.getpass(prompt)

    print(keys_command(rest, ask))


def models(nb: Any) -> None:
    from brute_nb.providers import aliases
    from brute_nb.providers.catalog import configured, key_lines, keyed, list_models

    print("providers (the key each has, and the model it would use; %brute keys set NAME saves one):")
    print("\n".join(key_lines()))
    known = keyed()
    servers = [(name, how) for name, how in configured() if name not in known or "BASE_URL" in how]
    if nb.settings.base_url:
        servers.append(("--base-url", nb.settings.base_url))
    if servers:
        print("servers configured here:")
        for name, how in servers:
            print(f"  {name:<16} {how}")
    saved = aliases.load()
    if saved:
        print(f"aliases ({aliases.path()}):")
        for name, target in sorted(saved.items()):
            print(f"  {name:<16} {target}")
    try:
        provider = nb.model_provider()
    except Exception as exc:  # no provider configured: the list above says what to set
        print(f"no current model: {exc}")
        return
    label = getattr(provider, "label", type(provider).__name__)
    problem = _sdk_problem(label)
    if problem:
        print(f"note: {problem}")
    found, why = list_models(provider)
    if why:
        print(f"models at {label}: cannot list them ({why})")
        return
    print(f"models at {label} ({len(found)}):")
    for model in found:
        print(f"  {model}")


def _sdk_problem(label: str) -> str | None:
    """Whether the current model is missing from its SDK's table or marked deprecated there (a 404 waiting)."""
    from brute_nb.providers.sdk_models import problem

    provider, _, model = label.partition(":")
    return problem(provider, model) if model else None


def installed() -> None:
    """Every provider prefix and tool name the entry points offer, with the package that registered each."""
    from brute_nb import plugins

    for group, label, use in ((plugins.PROVIDERS, "providers", "-m PREFIX:MODEL"),
                              (plugins.TOOLS, "tools", "--tools NAME or +NAME")):
        print(f"{label} ({use}; entry point group {group}):")
        for p in plugins.installed(group):
            note = "  (ignored: a built-in has this name)" if p.shadowed else ""
            print(f"  {p.name:<16} {p.distribution:<12} {p.value}{note}")
