"""The default models, and every model the README, the docs or a demo notebook names, are current models of the
installed SDKs: listed in their ``Literal`` model tables and not marked deprecated there (issue 41)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from brute_nb.providers import sdk_models
from brute_nb.providers.builtin import DEFAULT_MODELS

ROOT = Path(__file__).resolve().parents[2]
SPEC = re.compile(r"\b(anthropic|openai|openai-responses):([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])")
CLASS_CALL = re.compile(r"\b(AnthropicMessages|OpenAIChat|OpenAIResponses)\(\s*\"([^\"]+)\"")
CLASS_PROVIDER = {"AnthropicMessages": "anthropic", "OpenAIChat": "openai", "OpenAIResponses": "openai"}
VENDOR_NAME = re.compile(r"(claude|gpt|o\d|chatgpt|codex)-")
"""A vendor's own model name: ``openai:qwen3:latest`` (an Ollama model through ``OPENAI_BASE_URL``) is no SDK's."""
REQUEST_MODEL = re.compile(r"\"model\":\s*\"((?:claude|gpt|o\d)[^\"]*)\"")


def named_in(text: str) -> set[tuple[str, str]]:
    """``(provider, model)`` for every model a text names as ``provider:model``, a provider class's first
    argument, or a request's ``"model": "..."``."""
    found = {(p, m) for p, m in SPEC.findall(text)}
    found |= {(CLASS_PROVIDER[c], m) for c, m in CLASS_CALL.findall(text)}
    found |= {("anthropic" if m.startswith("claude") else "openai", m) for m in REQUEST_MODEL.findall(text)}
    return {(p, m) for p, m in found if VENDOR_NAME.match(m)}


def documents() -> dict[str, str]:
    """README.md, the docs pages and the demo notebooks' code cells: what a user reads or runs."""
    texts = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    for page in sorted((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").is_dir() else ():
        texts[str(page.relative_to(ROOT))] = page.read_text(encoding="utf-8")
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        texts[str(notebook.relative_to(ROOT))] = "\n".join("".join(c["source"]) for c in cells
                                                           if c["cell_type"] == "code")
    return texts


def test_the_tables_are_read_from_the_installed_sdks() -> None:
    anthropic, openai = sdk_models.listed("anthropic"), sdk_models.listed("openai")
    assert anthropic and openai and sdk_models.listed("ollama") is None
    assert sdk_models.deprecated("anthropic") <= anthropic
    assert sdk_models.deprecated("openai") and sdk_models.deprecated("openai") <= openai


@pytest.mark.parametrize("provider", sorted(set(DEFAULT_MODELS) & set(sdk_models.TABLES)))
def test_a_default_model_is_current_in_its_sdk(provider: str) -> None:
    assert sdk_models.problem(provider, DEFAULT_MODELS[provider]) is None


@pytest.mark.parametrize("name", sorted(documents()))
def test_every_model_a_document_names_is_current(name: str) -> None:
    problems = [p for provider, model in sorted(named_in(documents()[name]))
                if (p := sdk_models.problem(provider, model))]
    assert not problems, f"{name}: " + "; ".join(problems)


def test_the_check_fails_for_a_retired_or_deprecated_model() -> None:
    assert "not in" in (sdk_models.problem("anthropic", "claude-opus-4-1") or "")
    deprecated = sorted(sdk_models.deprecated("openai"))[0]
    assert "deprecated" in (sdk_models.problem("openai", deprecated) or "")
    assert named_in('auto("openai:gpt-4.1"); OpenAIChat("gpt-4o"); {"model": "claude-x"}; "openai:qwen3:8b"') == {
        ("openai", "gpt-4.1"), ("openai", "gpt-4o"), ("anthropic", "claude-x")}
