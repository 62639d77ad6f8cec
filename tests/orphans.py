"""Finding the processes a daemon started, by a marker in their command lines, and waiting
for them to go (the no-orphans tests and the crash run share these)."""

from __future__ import annotations

import asyncio
import contextlib
import time

import psutil  # type: ignore[import-untyped]

# A killed daemon's commands must be gone within this; the tests report how long it took.
GONE_WITHIN_SECONDS = 10.0


def marked(marker: str) -> list[psutil.Process]:
    """The live processes (zombies excluded) whose command line contains `marker`."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if any(marker in part for part in cmdline):
            found.append(process)
    return found


async def until_marked(marker: str, count: int, within: float = 20.0) -> list[psutil.Process]:
    """Wait until at least `count` processes carry `marker`; them."""
    deadline = time.monotonic() + within
    while len(found := marked(marker)) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"only {len(found)} of {count} processes with {marker!r} ran")
        await asyncio.sleep(0.05)
    return found


async def wait_none_marked(marker: str) -> tuple[float, list[str]]:
    """Seconds until no process carries `marker`, and the command lines of those still
    running after GONE_WITHIN_SECONDS (they are then killed: they are the test's own)."""
    started = time.monotonic()
    while found := marked(marker):
        if time.monotonic() - started > GONE_WITHIN_SECONDS:
            left = [" ".join(p.info["cmdline"] or []) for p in found]
            for process in found:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
            return time.monotonic() - started, left
        await asyncio.sleep(0.02)
    return time.monotonic() - started, []


async def seconds_until_none_marked(marker: str) -> float:
    """How long until no process carries `marker` (AssertionError past the bound)."""
    took, left = await wait_none_marked(marker)
    assert left == [], f"still running {GONE_WITHIN_SECONDS:g} s later: {left}"
    return took
