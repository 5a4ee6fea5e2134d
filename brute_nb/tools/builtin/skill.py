"""``skill``: skills are ``SKILL.md`` files (YAML front matter with ``name`` and ``description``, then a Markdown
body) that the model loads by name when it needs them.

Discovery, first name wins: ``<root>/.brute/skills/**/SKILL.md`` (project) then ``~/.config/brute/skills/**``
(global), each root's paths in sorted order. ``name`` defaults to the folder's name; a file without a
description, or with bad front matter, is skipped with a ``SkillWarning``, and so is one that is not a regular file
inside its skills folder (a link out of it would put any file into the system prompt) or larger than
``MAX_BYTES`` (``confine``). ``skills_prompt`` renders the
``<available_skills>`` block and ``skills_section`` the system prompt's Skills section (Brute's: two lines saying
when to load a skill, then the block; empty when there are no skills, so the prompt does not mention them).
"""

from __future__ import annotations

import os
import re
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from brute_nb import confine
from brute_nb.tools.base import Tool
from brute_nb.tools.context import root

FENCE = re.compile(r"^---[ \t]*$", re.MULTILINE)
MAX_BYTES = 1 << 20
"""A skill is instructions for the model: more than a MiB would not fit any context it is loaded into."""


class SkillWarning(UserWarning):
    """A SKILL.md file could not be read and was skipped."""


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    body: str
    path: Path

    @property
    def directory(self) -> Path:
        return self.path.parent


def skill_roots(workspace: Path | None = None) -> list[Path]:
    base = workspace if workspace is not None else root()
    return [base / ".brute" / "skills", Path.home() / ".config" / "brute" / "skills"]


def parse_skill(path: Path, root: Path | None = None) -> Skill | None:
    """The skill in ``path`` (read only from inside ``root``, default its folder), or None (with a SkillWarning
    saying why) when the file is not a valid skill.

    The system prompt lists the skills at every turn, so a parsed skill is kept: reused while ``path`` still
    resolves inside ``root`` (``confine.confined``, asked each time) to a regular file with the same device, inode,
    size and mtime in ns as the file that was read and parsed (an edit shows on the next turn). Only valid skills
    are kept, so a bad one warns at every turn, as before."""
    base = root if root is not None else path.parent
    try:
        where = confine.confined(path, base)
        st = os.lstat(where)
        key = (str(path), str(where))
        known = _PARSED.get(key)
        if known is not None and stat.S_ISREG(st.st_mode) and known[0] == confine.signature(st):
            return known[1]
        _PARSED.pop(key, None)
        skill, read = _parse(path, base)
        _PARSED[key] = (confine.signature(read), skill)
        return skill
    except (ValueError, OSError) as exc:  # OSError: PathOutsideRootError too
        warnings.warn(f"brute_nb: skipped skill {path}: {exc}", SkillWarning, stacklevel=2)
        return None


_PARSED: dict[tuple[str, str], tuple[confine.Signature, Skill]] = {}
"""(path, its real path) -> (the ``confine.signature`` of the file read, the skill parsed from it)."""


def _parse(path: Path, root: Path) -> tuple[Skill, os.stat_result]:
    import yaml  # type: ignore[import-untyped]

    with confine.place(path, confine.real(root)) as at:
        data, read = confine.read_all(at, limit=MAX_BYTES, why="a skill is instructions for the model, not data")
    text = data.decode("utf-8", errors="replace")
    if not text.startswith("---"):
        raise ValueError("it does not start with '---' front matter")
    parts = FENCE.split(text, maxsplit=2)
    if len(parts) < 3:
        raise ValueError("its front matter has no closing '---' line")
    try:
        meta = yaml.safe_load(parts[1])
    except yaml.YAMLError as exc:
        raise ValueError(f"its front matter is not valid YAML ({exc})") from None
    if not isinstance(meta, dict):
        raise ValueError("its front matter is not a mapping")
    description = str(meta.get("description") or "").strip()
    if not description:
        raise ValueError("its front matter has no description")
    name = str(meta.get("name") or path.parent.name).strip()
    return Skill(name=name, description=description, body=parts[2].strip(), path=path), read


def discover_skills(workspace: Path | None = None) -> list[Skill]:
    """Every skill visible from the workspace, sorted by name (project skills shadow global ones)."""
    found: dict[str, Skill] = {}
    for folder in skill_roots(workspace):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("SKILL.md")):
            skill = parse_skill(path, folder)
            if skill is not None and skill.name not in found:
                found[skill.name] = skill
    return sorted(found.values(), key=lambda s: s.name)


def skills_prompt(skills: list[Skill]) -> str:
    """The system-prompt listing: ``<available_skills>`` with a name and description per skill ("" if none)."""
    if not skills:
        return ""
    rows = ["<available_skills>"]
    for s in skills:
        rows += ["  <skill>", f"    <name>{s.name}</name>", f"    <description>{s.description}</description>",
                 "  </skill>"]
    rows.append("</available_skills>")
    return "\n".join(rows)


SKILLS_INTRO = """\
# Skills
Skills hold specialised instructions and workflows for particular kinds of task. When a task matches a skill's \
description, load that skill with the `skill` tool before you start, and follow it."""


def skills_section(workspace: Path | None = None) -> str:
    """The system prompt's Skills section for the skills visible from ``workspace`` ("" when there are none)."""
    listing = skills_prompt(discover_skills(workspace))
    return f"{SKILLS_INTRO}\n\n{listing}" if listing else ""


class SkillLoad(Tool):
    name = "skill"
    description = ("Load a skill (instructions for a specific kind of task) by name; the available skills are "
                   "listed in the system prompt.")
    params: ClassVar[dict[str, Any]] = {
        "name": {"type": "string", "desc": "The skill's name", "required": True},
    }

    def execute(self, name: str) -> str:
        skills = discover_skills()
        for s in skills:
            if s.name == name:
                return f"# Skill: {s.name}\n(directory: {s.directory})\n\n{s.body}"
        available = ", ".join(s.name for s in skills) or "none (add SKILL.md files under .brute/skills/)"
        raise LookupError(f"Unknown skill {name!r}. Available skills: {available}")
