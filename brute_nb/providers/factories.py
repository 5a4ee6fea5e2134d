"""brute_nb's own providers by kind: the factory each ``-m KIND:MODEL`` builds (``module:attribute``, the form of an
entry point's value), registered by ``plugins`` through the function a third party's entry point reaches.

Plain data that imports only the profiles' data, so the foundation's ``plugins`` can read it; the vendors are named
here, beside their profiles, not in the core. A hosted OpenAI-compatible endpoint needs no line here: its profile
entry makes its factory (``builtin.HOSTED``).
"""

from __future__ import annotations

from brute_nb.providers.profiles.compatible import HOSTED

FACTORIES: dict[str, str] = {
    "anthropic": "brute_nb.providers.builtin:anthropic",
    "openai": "brute_nb.providers.builtin:openai",
    "openai-responses": "brute_nb.providers.builtin:openai_responses",
    "ollama": "brute_nb.providers.builtin:ollama",
    "llm": "brute_nb.providers.builtin:llm",
    **{profile.kind: f"brute_nb.providers.builtin:HOSTED.{profile.kind}" for profile in HOSTED},
}
