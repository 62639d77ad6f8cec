"""Ctrl-C for `agentls run`: the first press stops the turn, the second stops waiting.

Python turns SIGINT into KeyboardInterrupt wherever the main thread happens to be, which
is what a blocking client wants (a prompt, a socket wait, a start-up import are all left at
once), but not an event loop: a KeyboardInterrupt raised inside a task's step kills that
task half-way (the session's turn worker among them) without its end being recorded. So
the presses are counted here, raised as KeyboardInterrupt outside a loop and handed to a
callback on the loop inside one. From the third press on SIGINT is ignored: after two, the
process is already on its way out, and an exception in its last lines would only cost it
its exit code.

A run stopped by Ctrl-C leaves through `exit_now`, not Python's exit: under `python -m`,
CPython remembers a KeyboardInterrupt that went through code run by exec() (as dataclasses
and namedtuples are made while modules import) even after it was caught, and at exit kills
the process with SIGINT instead of letting it exit 130.

Standard library only, like agentls.warm: this is on the warm path.
"""

from __future__ import annotations

import os
import signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable
    from types import FrameType
    from typing import NoReturn

# Presses that still do something: the first stops the turn, the second stops waiting.
PRESSES_THAT_COUNT = 2


class CtrlC:
    """SIGINT for the whole of one `agentls run`, counted."""

    def __init__(self) -> None:
        self.presses = 0
        self._on_press: Callable[[int], None] | None = None

    def install(self) -> bool:
        """Take SIGINT over, unless the process was started with it ignored.

        A shell without job control starts `agentls run &` with SIGINT ignored, so that a
        Ctrl-C meant for the foreground leaves the job alone; that choice is kept."""
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return False
        signal.signal(signal.SIGINT, self._on_signal)
        return True

    def deliver_to(self, loop: asyncio.AbstractEventLoop, callback: Callable[[int], None]) -> None:
        """From now on a press calls `callback(presses)` on `loop` instead of raising."""

        def on_press(presses: int) -> None:
            loop.call_soon_threadsafe(callback, presses)

        self._on_press = on_press

    def raise_again(self) -> None:
        """A press raises KeyboardInterrupt again (the loop is done)."""
        self._on_press = None

    def leave(self) -> None:
        """The exit code is decided: a press from now on has nothing left to stop.

        Ignored rather than counted: at the very end of its exit Python drops its own
        handler, and a press then would kill the process instead of letting it exit."""
        if signal.getsignal(signal.SIGINT) == self._on_signal:
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.presses += 1
        if self.presses == PRESSES_THAT_COUNT:
            self.leave()
        if self._on_press is not None:
            self._on_press(self.presses)
            return
        raise KeyboardInterrupt


def exit_now(code: int) -> NoReturn:
    """Exit with `code` at once, without Python's exit (what is printed goes out first)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            continue  # a closed or broken stream: nothing more can go out there
    os._exit(code)


class EndWithoutTeardown:
    """The end of `agentls run` without the interpreter's teardown, as an atexit handler
    registered first (so it runs last) that leaves with `code` once it is set.

    That teardown frees every module and object the run loaded (the core, the SDK): it took
    0.3–0.4 s after the last answer with the Anthropic SDK, for nothing: transcripts are
    flushed at every record, and the other atexit handlers (logging's flush among them)
    have run when this one does. After an exception (no code) the usual exit runs."""

    def __init__(self) -> None:
        self.code: int | None = None

    def leave(self) -> None:
        if self.code is not None:
            exit_now(self.code)
