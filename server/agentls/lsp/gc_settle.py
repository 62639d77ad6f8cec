"""The daemon's startup objects leave the garbage collector's rounds once it has started.

A streamed turn sends thousands of events, and the running turn's last 10,000 are held for
a window that comes back (session.events_out.RecentEvents): they outlive the young
generations, so a full collection comes about every second 20,000-event turn, and each one
walked every object the daemon holds, its modules, classes and the provider's SDK (about
110k objects, 55-75 ms on a loaded 2-core machine: 3 µs per event of that turn). Those are
made once and live as long as the process, so after the first `initialized` (the core and
the SDK loaded) they are moved out of the collector's way with `gc.freeze()`.

Once per process: what is frozen is never collected, so freezing again later would keep
every cycle alive at that moment (a socket daemon's later connections and sessions) for
good. The first connection's own objects are frozen with the rest, a bounded, one-off cost.
Whether that is done is kept here, not asked of `gc.get_freeze_count()`: that counts the
frozen objects by walking them all (25 ms for the ~190k of a daemon with the Anthropic SDK),
and every later connection's `initialized` would pay it.
"""

from __future__ import annotations

import gc

# Set by the entry points of a daemon process (stdio, the socket daemon): a server built
# inside another program (the tests, an embedding) leaves that program's collector alone.
_OWN_PROCESS = {"daemon": False, "frozen": False}


def daemon_process() -> None:
    """This process is the daemon: it may freeze its startup objects."""
    _OWN_PROCESS["daemon"] = True


def freeze_startup_objects() -> bool:
    """In a daemon process, move every object alive now out of the collector's rounds, the
    first time only; True if it did."""
    if not _OWN_PROCESS["daemon"] or _OWN_PROCESS["frozen"]:
        return False
    _OWN_PROCESS["frozen"] = True
    # Asked once, while nothing of ours is frozen (a short walk): something else froze first.
    if gc.get_freeze_count():
        return False
    gc.freeze()
    return True
