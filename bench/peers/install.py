"""The peers from the npm registry, installed on demand into ~/.cache/agentls-bench/peers.

Only the bench calls this (never the tests). Versions are pinned so that numbers taken on
different days compare; a package already there at its pinned version is not fetched again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

CACHE = Path.home() / ".cache" / "agentls-bench" / "peers"


@dataclass(frozen=True, slots=True)
class Peer:
    package: str
    version: str
    binary: str

    @property
    def folder(self) -> Path:
        return CACHE / "node_modules" / self.package

    @property
    def command(self) -> Path:
        """What npm puts on PATH for it (`node_modules/.bin/<binary>`)."""
        return CACHE / "node_modules" / ".bin" / self.binary

    def installed_version(self) -> str | None:
        try:
            manifest = json.loads((self.folder / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return str(manifest.get("version"))


CLAUDE = Peer("@anthropic-ai/claude-code", "2.1.197", "claude")
CODEX = Peer("@openai/codex", "0.169.0", "codex")


def _native_claude_missing() -> bool:
    """Claude Code's bin/claude.exe is a small stub until its postinstall copies the binary."""
    exe = CLAUDE.folder / "bin" / "claude.exe"
    return not exe.exists() or exe.stat().st_size < 1_000_000


def install(peers: tuple[Peer, ...]) -> str | None:
    """None once every peer is installed at its pinned version, else why not."""
    missing = [p for p in peers if p.installed_version() != p.version or not p.command.exists()]
    if missing:
        npm = shutil.which("npm")
        if npm is None:
            return "npm is not on PATH"
        CACHE.mkdir(parents=True, exist_ok=True)
        specs = [f"{p.package}@{p.version}" for p in missing]
        print(f"bench_peers: npm install {' '.join(specs)} into {CACHE}", flush=True)
        try:
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--save-exact", *specs],
                cwd=CACHE,
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return "npm install took over 15 minutes (no network?)"
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if line.startswith("npm error")]
            return f"npm install failed (no network?): {'; '.join(errors[:4])[:400]}"
    if CLAUDE in peers and _native_claude_missing():
        # npm ran with --ignore-scripts (a user's .npmrc): run the postinstall ourselves.
        subprocess.run(["node", "install.cjs"], cwd=CLAUDE.folder, capture_output=True, check=False)
        if _native_claude_missing():
            return "Claude Code's native binary is missing (its optional package did not install)"
    return None
