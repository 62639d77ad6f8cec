"""Path confinement: every way out of the workspace roots is refused, nothing inside is."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentls.workspace.paths import PathOutsideWorkspace, PathPolicy


def make_tree(base: Path) -> tuple[Path, Path]:
    """A workspace with links that escape and links that stay inside, next to an outside dir."""
    root = base / "ws"
    outside = base / "outside"
    (root / "src" / "pkg").mkdir(parents=True)
    outside.mkdir()
    (root / "src" / "app.py").write_text("app\n")
    (outside / "secret.txt").write_text("secret\n")
    (root / "link_out_file").symlink_to(outside / "secret.txt")
    (root / "link_out_dir").symlink_to(outside)
    (root / "src" / "link_in_file").symlink_to(root / "src" / "app.py")
    (root / "link_in_dir").symlink_to(root / "src")
    (root / "src" / "link_up").symlink_to("..")
    return root.resolve(), outside.resolve()


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    return make_tree(tmp_path)


def test_relative_path_resolves_against_cwd(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    policy = PathPolicy([root])
    assert policy.resolve("app.py", root / "src") == root / "src" / "app.py"


def test_not_yet_existing_file_inside_is_allowed(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert PathPolicy([root]).resolve("new/dir/file.py", root) == root / "new" / "dir" / "file.py"


def test_dot_dot_escape_is_refused(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with pytest.raises(PathOutsideWorkspace, match="outside the workspace"):
        PathPolicy([root]).resolve("src/../../outside/secret.txt", root)


def test_dot_dot_that_stays_inside_is_allowed(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert PathPolicy([root]).resolve("src/pkg/../app.py", root) == root / "src" / "app.py"


def test_absolute_path_outside_is_refused(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    with pytest.raises(PathOutsideWorkspace):
        PathPolicy([root]).resolve(str(outside / "secret.txt"), root)


def test_sibling_with_a_common_name_prefix_is_outside(tmp_path: Path) -> None:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (tmp_path / "ws-evil").mkdir()
    with pytest.raises(PathOutsideWorkspace):
        PathPolicy([root]).resolve(str(tmp_path / "ws-evil" / "x"), root)


def test_symlinked_file_pointing_outside_is_refused(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with pytest.raises(PathOutsideWorkspace):
        PathPolicy([root]).resolve("link_out_file", root)


def test_path_through_a_symlinked_directory_pointing_outside_is_refused(
    tree: tuple[Path, Path],
) -> None:
    root, _ = tree
    policy = PathPolicy([root])
    with pytest.raises(PathOutsideWorkspace):
        policy.resolve("link_out_dir/secret.txt", root)
    with pytest.raises(PathOutsideWorkspace):
        policy.resolve("link_out_dir/not-yet-created.txt", root)


def test_symlinks_staying_inside_resolve_to_their_targets(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    policy = PathPolicy([root])
    assert policy.resolve("src/link_in_file", root) == root / "src" / "app.py"
    assert policy.resolve("link_in_dir/app.py", root) == root / "src" / "app.py"


def test_a_path_in_any_of_several_roots_is_allowed(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    policy = PathPolicy([root, outside])
    assert policy.resolve("link_out_file", root) == outside / "secret.txt"


@pytest.mark.parametrize("raw", ["", "a\x00b"])
def test_empty_and_nul_paths_are_refused(tree: tuple[Path, Path], raw: str) -> None:
    root, _ = tree
    with pytest.raises(PathOutsideWorkspace):
        PathPolicy([root]).resolve(raw, root)


@pytest.fixture(scope="module")
def shared_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    yield make_tree(tmp_path_factory.mktemp("paths"))


SEGMENTS = st.sampled_from(
    [
        "src",
        "pkg",
        "app.py",
        "..",
        ".",
        "",
        "link_out_file",
        "link_out_dir",
        "link_in_dir",
        "link_in_file",
        "link_up",
        "outside",
        "ws",
        "missing",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    segments=st.lists(SEGMENTS, min_size=1, max_size=8),
    absolute=st.booleans(),
    cwd_in_src=st.booleans(),
)
def test_resolve_returns_a_path_inside_a_root_or_raises(
    shared_tree: tuple[Path, Path], segments: list[str], absolute: bool, cwd_in_src: bool
) -> None:
    root, _ = shared_tree
    cwd = root / "src" if cwd_in_src else root
    raw = "/".join(segments)
    if absolute:
        raw = str(root.parent / raw)
    policy = PathPolicy([root])
    expected = Path(os.path.realpath(cwd / raw)) if raw else None
    inside = expected is not None and (expected == root or expected.is_relative_to(root))
    try:
        resolved = policy.resolve(raw, cwd)
    except PathOutsideWorkspace:
        assert not inside
        return
    assert inside and resolved == expected
    assert resolved.is_absolute() and os.path.realpath(resolved) == str(resolved)


def test_a_sessions_directory_is_resolved_once_to_show_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every tool call shows its path relative to the session's directory: resolving that
    # directory's symlinks again at each call was two realpath calls a Read.
    from agentls.tools.base import display_path

    real = tmp_path / "real"
    (real / "pkg").mkdir(parents=True)
    cwd = tmp_path / "link"
    cwd.symlink_to(real)
    resolved: list[str] = []
    original = os.path.realpath

    def counting(path: str | os.PathLike[str], *args: object, **kwargs: object) -> str:
        resolved.append(os.fspath(path))
        return original(path)

    monkeypatch.setattr(os.path, "realpath", counting)
    assert display_path(real / "app.py", cwd) == "app.py"
    assert display_path(real / "pkg" / "mod.py", cwd) == "pkg/mod.py"
    assert display_path(tmp_path / "elsewhere.py", cwd) == str(tmp_path / "elsewhere.py")
    assert display_path(real, cwd) == "."
    # A sibling whose name starts with cwd's is outside it.
    assert display_path(tmp_path / "realm" / "x.py", cwd) == str(tmp_path / "realm" / "x.py")
    assert resolved.count(str(cwd)) == 1


@pytest.mark.parametrize(
    "raw",
    ["app.py", "", ".", "/etc/hosts", "a/../app.py", "./x//y/", "ln/../app.py", "ln/z", "~", "//x"],
)
def test_absolute_path_resolves_as_joining_paths_would(tmp_path: Path, raw: str) -> None:
    from agentls.tools.base import absolute_path

    (tmp_path / "sub").mkdir()
    (tmp_path / "ln").symlink_to(tmp_path / "sub")
    expected = Path(os.path.realpath(tmp_path / Path(os.path.expanduser(raw))))
    assert absolute_path(raw, tmp_path) == expected
    assert str(absolute_path(raw, tmp_path)) == str(expected)
