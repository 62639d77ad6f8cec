"""A folder's listing for the model: depth-limited, capped with a note, shallowest kept."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentls.context.listing import MAX_ENTRIES, list_directory


def touch(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("", encoding="utf-8")


def test_a_walk_goes_three_levels_down_and_shows_the_fourth_as_a_folder(tmp_path: Path) -> None:
    touch(tmp_path, "a/b/c/d/deep.txt", "a/b/c/three.txt", "a/top.txt", "__pycache__/x.pyc")
    (tmp_path / "link").symlink_to(tmp_path / "a", target_is_directory=True)
    listing = list_directory(tmp_path)
    assert listing.source == "walk" and not listing.cut
    assert listing.entries == ["a/", "a/b/", "a/b/c/", "a/top.txt", "link"]
    assert listing.text().splitlines() == listing.entries


def test_a_cut_git_listing_keeps_the_shallowest_entries_and_says_of_how_many(
    tmp_path: Path,
) -> None:
    touch(tmp_path, "README.md", *(f"pkg/sub/m{n:03}.py" for n in range(MAX_ENTRIES + 20)))
    touch(tmp_path, "ignored/x.txt")
    (tmp_path / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    listing = list_directory(tmp_path)
    assert listing.source == "git" and listing.cut
    total = MAX_ENTRIES + 20 + 4  # the modules, README.md, .gitignore, pkg/, pkg/sub/
    assert listing.total == total and len(listing.entries) == MAX_ENTRIES
    assert listing.entries[:4] == [".gitignore", "README.md", "pkg/", "pkg/sub/"]
    assert "ignored/" not in listing.entries
    assert listing.text().endswith(f"… (listing cut: {MAX_ENTRIES} of {total} entries shown)")


def test_a_folder_git_ignores_is_walked(tmp_path: Path) -> None:
    touch(tmp_path, "out/bundle.js")
    (tmp_path / ".gitignore").write_text("out/\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    listing = list_directory(tmp_path / "out")
    assert (listing.source, listing.entries) == ("walk", ["bundle.js"])
