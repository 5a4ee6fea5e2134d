"""confine: the one inside-root test, the one atomic write, bounded reads and hash names (issues 25 and 26).

The hostile tables run every entry point against links, FIFOs and huge files (tests/security/test_hostile_*.py);
these pin the helpers' own contracts, which those entry points rely on.
"""

from __future__ import annotations

import ast
import hashlib
import os
import stat
from pathlib import Path

import pytest

from brute_nb import confine
from brute_nb.attachments import MAX_BYTES, AttachmentError, attachment
from brute_nb.errors import PathOutsideRootError


@pytest.mark.parametrize(("path", "root", "expected"), [
    ("/a/b", "/a", True), ("/a", "/a", True), ("/ab", "/a", False), ("/a/../b", "/a", False), ("/x", "/", True),
    ("/a/b", "/a/", True),
])
def test_inside_compares_whole_components(path: str, root: str, expected: bool) -> None:
    assert confine.inside(os.path.normpath(path), root) is expected


def test_confined_names_where_a_link_leads(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "out").symlink_to(tmp_path)
    assert confine.confined(tmp_path / "root" / "in.txt", tmp_path / "root") == tmp_path / "root" / "in.txt"
    with pytest.raises(PathOutsideRootError, match=r"resolves to .*, outside .*root"):
        confine.confined(tmp_path / "root" / "out" / "x", tmp_path / "root")


@pytest.mark.parametrize("value", ["A" * 64, "a" * 63, "a" * 65, "../" + "a" * 61, "a" * 63 + "\x00", 7, None])
def test_a_hash_name_is_64_lowercase_hex_digits(value: object) -> None:
    with pytest.raises(ValueError, match="64 lowercase hex digits"):
        confine.check_digest(value)
    assert confine.check_digest("0f" * 32) == "0f" * 32


def test_write_atomic_keeps_the_mode_and_writes_a_link_inside_its_root_as_its_target(tmp_path: Path) -> None:
    kept = tmp_path / "kept.txt"
    kept.write_text("old")
    kept.chmod(0o640)
    confine.write_atomic(kept, b"new")
    assert kept.read_text() == "new" and stat.S_IMODE(kept.stat().st_mode) == 0o640
    target = tmp_path / "target.txt"
    target.write_text("theirs")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    confine.write_atomic(link, b"ours")
    assert link.is_symlink() and target.read_text() == "ours"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt", "link.txt", "target.txt"]


def test_write_atomic_leaves_the_old_file_whole_when_the_rename_fails(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.json"
    path.write_text("old")

    def no_rename(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(confine.os, "rename", no_rename)
    with pytest.raises(OSError, match="No space"):
        confine.write_atomic(path, b"new")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_write_atomic_never_writes_through_a_folder_that_leaves_its_root(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "away").mkdir()
    (tmp_path / "root" / "sub").symlink_to(tmp_path / "away")
    with pytest.raises(PathOutsideRootError):
        confine.write_atomic(tmp_path / "root" / "sub" / "x.txt", b"x", root=tmp_path / "root")
    assert list((tmp_path / "away").iterdir()) == []


def test_read_hashed_refuses_bytes_that_do_not_hash_to_their_name(tmp_path: Path) -> None:
    good = b"the user's bytes"
    name = hashlib.sha256(good).hexdigest()
    (tmp_path / name).write_bytes(good)
    assert confine.read_hashed(tmp_path / name, name, root=tmp_path) == good
    (tmp_path / name).write_bytes(b"planted")
    with pytest.raises(confine.DigestMismatchError, match="does not hold the bytes its name says"):
        confine.read_hashed(tmp_path / name, name, root=tmp_path)


def test_a_2_gib_attachment_is_refused_before_it_is_read_naming_the_api_limit(tmp_path: Path) -> None:
    huge = tmp_path / "huge.pdf"
    with open(huge, "wb") as f:
        f.truncate(2 << 30)  # sparse: reading it would take 2 GiB of memory
    with pytest.raises(AttachmentError) as error:
        attachment(huge)
    text = str(error.value)
    assert "2.0 GiB" in text and f"{MAX_BYTES >> 20}.0 MiB" in text and "Anthropic" in text and "huge.pdf" in text


def test_attaching_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    with pytest.raises(AttachmentError, match="FIFO"):
        attachment(fifo)  # a blocking open would hang here forever (no writer)


def test_an_image_over_the_image_limit_says_whose_limit_it_is() -> None:
    big = b"\x89PNG\r\n\x1a\n" + bytes(21 << 20)
    with pytest.raises(AttachmentError, match=r"20\.0 MiB.*OpenAI"):
        attachment(big)


OWN_WRITES_AND_ROOT_TESTS = {
    ("brute_nb.notebook.paths", "os.rename"): "moves a session to its notebook's new name (hard link first); it "
                                             "writes no bytes, so there is no half-written file to guard against",
}
"""Calls outside ``confine`` that rename a file or compare a path with a root, and why each is not one of the two."""


def _renames_and_root_tests(path: Path) -> set[str]:
    """The calls in ``path`` that rename a file into place or test whether a path lies under another."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if owner in ("os", "shutil") and func.attr in ("replace", "rename", "renames", "move"):
                found.add(f"{owner}.{func.attr}")
            elif func.attr in ("is_relative_to", "commonpath", "commonprefix"):
                found.add(func.attr)
        elif isinstance(func, ast.Name) and func.id in ("commonpath", "commonprefix"):
            found.add(func.id)
    return found


def test_only_confine_writes_atomically_or_decides_what_is_inside_a_root() -> None:
    """One fsync'd atomic write and one inside-root test, used everywhere (issue 26 item 6): a module that renamed
    its own draft into place (aliases.json, the cassette merge, once) or compared a path with its root its own way
    kept a weaker rule than confine's without anyone seeing it."""
    root = Path(confine.__file__).parent
    others: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        if module == "brute_nb.confine":
            continue
        for call in sorted(_renames_and_root_tests(path)):
            if (module, call) not in OWN_WRITES_AND_ROOT_TESTS:
                others.setdefault(module, []).append(call)
    assert not others, f"use confine.write_atomic / confine.inside instead: {others}"
    assert {"os.rename"} <= _renames_and_root_tests(Path(confine.__file__))  # the scan sees confine's own
