"""Runs a command with its standard input, a pseudo-terminal, as its controlling terminal.

A background shell is started in a session of its own (so a kill reaches its whole group)
with the terminal's other end as its stdin, stdout and stderr. Only a session leader that
claims the terminal gets job control from it: Ctrl-C written to the terminal then
interrupts the foreground command, and `read -p` or a REPL see a terminal as a user's
would. Python cannot claim it between fork and exec without running code in the child of
a threaded daemon, so this small script does it, then becomes the command (same pid, same
group).

Run as a script (`python -I -S pty_ctty.py COMMAND ARGS…`): standard library only.
"""

from __future__ import annotations

import fcntl
import os
import sys
import termios


def main(argv: list[str]) -> int:
    try:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    except OSError as exc:
        # The command still runs, on the terminal, only without job control.
        sys.stderr.write(f"agentls: no controlling terminal ({exc.strerror})\r\n")
    try:
        os.execvp(argv[1], argv[1:])
    except OSError as exc:
        sys.stderr.write(f"agentls: cannot run {argv[1]}: {exc.strerror}\r\n")
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
