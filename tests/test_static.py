"""The code stays clean: ruff on everything, mypy --strict on the package."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.skipif(
    shutil.which("ruff") is None and not (Path(sys.prefix) / "bin" / "ruff").exists(),
    reason="ruff not installed",
)
def test_ruff_is_clean() -> None:
    ruff = str(Path(sys.prefix) / "bin" / "ruff")
    done = _run(ruff, "check", "server", "tests", "bench", "scripts")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_is_clean_on_the_package() -> None:
    done = _run(sys.executable, "-m", "mypy", "--strict", "server/agentls")
    assert done.returncode == 0, done.stdout + done.stderr
