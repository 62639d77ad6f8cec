"""Real bash as the oracle for the shell reader: which commands does a line really run?

Every command is run with an empty PATH, so bash finds none of them and calls
`command_not_found_handle`, which records the command's words in a trace file instead. The
trace is what bash would have executed, word for word, after its own quote removal.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

BASH = shutil.which("bash") or "/bin/bash"
_HANDLER = """
command_not_found_handle() {
  # A file per call (each runs in its own subshell), so commands running at once never
  # interleave their records.
  printf '%s\\037' "$@" > "$AGENTLS_TRACE.$BASHPID"
  return 0
}
"""


class BashOracle:
    """Runs lines in a scratch directory and reports the commands bash ran."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="agentls-bash-oracle-"))
        (self._dir / "bin").mkdir()
        (self._dir / "work").mkdir()
        self._env_file = self._dir / "env.sh"
        self._env_file.write_text(_HANDLER, encoding="utf-8")
        self._runs = 0

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    def accepts(self, line: str) -> bool:
        """Whether `bash -n` finds the line's syntax valid."""
        done = subprocess.run(
            [BASH, "-n", "-c", line],
            capture_output=True,
            timeout=10,
            check=False,
            env={"PATH": str(self._dir / "bin")},
        )
        return done.returncode == 0

    def runs(self, line: str) -> Counter[tuple[str, ...]]:
        """The commands bash runs for `line`, as a multiset of their words."""
        # Fresh names per run: a background job a subshell left behind writes to its own.
        self._runs += 1
        trace = self._dir / f"trace-{self._runs}"
        env = {
            "PATH": str(self._dir / "bin"),
            "BASH_ENV": str(self._env_file),
            "AGENTLS_TRACE": str(trace),
            "HOME": str(self._dir / "work"),
        }
        subprocess.run(
            [BASH, "-c", line + "\nwait"],
            cwd=self._dir / "work",
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
        records = [path.read_bytes() for path in self._dir.glob(f"{trace.name}.*")]
        return Counter(_words(record) for record in records)


def _words(record: bytes) -> tuple[str, ...]:
    return tuple(record.decode("utf-8", "surrogateescape").split("\x1f")[:-1])
