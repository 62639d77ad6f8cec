"""Bash: run a shell command in the workspace and hand its output back to the model.

Every command runs in its own process group, so a timeout or a user's abort can kill it
with everything it started; nothing the agent launched outlives the turn that launched it.
The group is also registered with the watchdog (tools/process_guard.py), which kills it if
the daemon dies first, even by SIGKILL.
Output streams to the client as it comes and is capped (head and tail kept) so a chatty
command cannot flood the model's context. `is_read_only_command` is the deliberately
tight allow-list that lets a few inspection commands run in the concurrent read lane.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from agentls.redact import without_provider_keys
from agentls.sandbox import Sandbox
from agentls.shell_syntax import SimpleCommand, parse_script
from agentls.tools.base import Tool, ToolContext, ToolError, ToolKind, ToolOutput
from agentls.tools.process_guard import guard_group, guarded_environ
from agentls.workspace.client_side import CommandResult

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
# SIGTERM first, so well-behaved programs clean up; SIGKILL what is left after this.
KILL_GRACE_SECONDS = 0.25
KILL_POLL_SECONDS = 0.02
# After the shell exits, its background children may still hold the pipe open.
DRAIN_AFTER_EXIT_SECONDS = 0.2
PROGRESS_INTERVAL_SECONDS = 0.1
MAX_PROGRESS_CHARS = 8_000
TITLE_CHARS = 80


class OutputBuffer:
    """Keeps the head and the tail of an unbounded stream in bounded memory."""

    def __init__(self, limit: int = MAX_OUTPUT_CHARS) -> None:
        self._half = limit // 2
        self._head = ""
        self._tail = ""
        self.total = 0

    def append(self, text: str) -> None:
        """Add text; only the first and last `limit / 2` characters are kept."""
        self.total += len(text)
        room = self._half - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        self._tail += text
        if len(self._tail) > 2 * self._half:
            self._tail = self._tail[-self._half :]

    @property
    def truncated(self) -> bool:
        """Whether anything was dropped from the middle."""
        return self.total > 2 * self._half

    def render(self) -> str:
        """All the text, or its head and tail around a marker saying how much was cut."""
        if not self.truncated:
            return self._head + self._tail
        tail = self._tail[-self._half :]
        omitted = self.total - len(self._head) - len(tail)
        return f"{self._head}\n\n[... {omitted} characters truncated ...]\n\n{tail}"


class ProgressLines:
    """Forwards complete output lines to a progress callback, at most every interval."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._pending = ""
        self._last = 0.0

    def feed(self, text: str) -> None:
        """Queue text; send the complete lines if the interval has passed."""
        self._pending += text
        if time.monotonic() - self._last >= PROGRESS_INTERVAL_SECONDS:
            self.flush(partial=False)

    def flush(self, partial: bool) -> None:
        """Send the queued complete lines (and the unfinished one when `partial`)."""
        cut = len(self._pending) if partial else self._pending.rfind("\n") + 1
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        if not ready:
            return
        if len(ready) > MAX_PROGRESS_CHARS:
            ready = "[...]\n" + ready[-MAX_PROGRESS_CHARS:]
        self._last = time.monotonic()
        self._emit(ready)


class TextSink(Protocol):
    """Where a command's decoded output goes (an OutputBuffer, a background shell's)."""

    def append(self, text: str) -> None: ...


async def pump_output(
    stream: asyncio.StreamReader, buffer: TextSink, progress: ProgressLines
) -> None:
    """Read the merged output until EOF into the buffer and the progress stream."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        try:
            chunk = await asyncio.wait_for(stream.read(65536), PROGRESS_INTERVAL_SECONDS)
        except TimeoutError:
            progress.flush(partial=False)
            continue
        text = decoder.decode(chunk, final=not chunk)
        buffer.append(text)
        progress.feed(text)
        if not chunk:
            progress.flush(partial=True)
            return


def _group_alive(pgid: int) -> bool:
    """Whether a member of the group still runs; zombies waiting to be reaped do not count."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member we may not signal (it changed user) is still alive.
        return True
    return _running_member(pgid)


def _running_member(pgid: int) -> bool:
    # killpg also reaches zombies (killed children an init that reaps slowly still holds),
    # so /proc tells whether anything of the group still runs.
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if entry.isdigit() and _member_state(entry, pgid) not in (None, "Z", "X"):
            return True
    return False


def _member_state(pid: str, pgid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0] if len(fields) > 2 and fields[2] == str(pgid) else None


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def kill_process_group(pgid: int) -> None:
    """SIGTERM the whole group, then SIGKILL whatever is still there after a short grace."""
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_SECONDS
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            _signal_group(pgid, signal.SIGKILL)
            return
        await asyncio.sleep(KILL_POLL_SECONDS)


async def wait_for_exit(process: asyncio.subprocess.Process, pump: asyncio.Task[None]) -> int:
    code = await process.wait()
    # Background children (`server &`) may keep the pipe open: take what they wrote so far.
    await asyncio.wait({pump}, timeout=DRAIN_AFTER_EXIT_SECONDS)
    return code


def exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"Terminated by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"Terminated by signal {-code}"
    return f"Exit code {code}"


def _result(output: str, code: int, truncated: bool) -> ToolOutput:
    output = output.rstrip("\n")
    if code == 0:
        return ToolOutput(output or "(Bash completed with no output)", truncated=truncated)
    text = f"{output}\n{exit_text(code)}" if output else exit_text(code)
    return ToolOutput(text, is_error=True, truncated=truncated)


def _timed_out(buffer: OutputBuffer, timeout_ms: int) -> ToolOutput:
    output = buffer.render().rstrip("\n") or "(no output)"
    text = f"Command timed out after {timeout_ms / 1000:g} s. Output so far:\n{output}"
    return ToolOutput(text, is_error=True, truncated=buffer.truncated)


def _terminal_result(ran: CommandResult, timeout_ms: int) -> ToolOutput:
    """What a command run in the editor's terminal gives the model, as a local run would."""
    buffer = OutputBuffer()
    buffer.append(ran.output)
    truncated = buffer.truncated or ran.truncated
    if ran.timed_out:
        return replace(_timed_out(buffer, timeout_ms), truncated=truncated)
    if ran.exit_code is None:
        output = buffer.render().rstrip("\n")
        ended = f"Terminated by signal {ran.signal or 'unknown'}"
        return ToolOutput(
            f"{output}\n{ended}" if output else ended, is_error=True, truncated=truncated
        )
    return _result(buffer.render(), ran.exit_code, truncated)


@contextlib.asynccontextmanager
async def spawn_shell(
    argv: list[str], cwd: Path
) -> AsyncIterator[tuple[asyncio.subprocess.Process, asyncio.StreamReader]]:
    """Start bash with stdout and stderr on one pipe that we own and close when done.

    Owning the pipe (rather than letting asyncio make it) means Process.wait() returns
    when bash exits, even while a backgrounded child still holds the pipe's write end.
    """
    read_fd, write_fd = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            env=guarded_environ(without_provider_keys(os.environ)),
            # Its own process group, so a kill reaches everything the command started.
            start_new_session=True,
        )
    except OSError as exc:
        os.close(read_fd)
        raise ToolError(f"Cannot run the command in {cwd}: {exc.strerror}") from exc
    finally:
        os.close(write_fd)
    # Killed by the watchdog if the daemon dies before the command ends.
    guard_group(process.pid)
    reader = asyncio.StreamReader()
    transport, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
    )
    try:
        yield process, reader
    finally:
        transport.close()


class BashInput(BaseModel):
    command: str = Field(description="The command to run")
    timeout: int | None = Field(
        default=None, ge=1, description="Timeout in milliseconds (default 120000, max 600000)"
    )
    description: str | None = Field(
        default=None, description="What the command does, in 5-10 words"
    )
    run_in_background: bool = Field(
        default=False,
        description="Run it in the background and return its shell id at once; read its "
        "output with BashOutput, stop it with KillShell",
    )


class BashTool(Tool[BashInput]):
    """Runs a shell command in the working directory."""

    name: str = "Bash"
    description: str = (
        "Runs a command with /bin/bash in the working directory and returns its combined "
        "stdout and stderr. Each call starts a fresh shell: `cd` and exported variables do "
        "not carry over. stdin is closed, so interactive commands fail. timeout is in "
        "milliseconds (default 120000, max 600000); on timeout the command and its children "
        "are killed. Output over 30000 characters keeps its head and tail. A non-zero exit "
        "code is reported as an error. Quote paths that contain spaces. Prefer Read, Glob, "
        "Grep, Edit and Write over cat, find, grep, sed and echo redirection for file work. "
        "Give a short description of what the command does. With run_in_background the "
        "command starts in a background shell and the call returns its id at once (timeout "
        "does not apply): use it for servers and long jobs, read its output with "
        "BashOutput and stop it with KillShell; it runs until it exits, is killed, or the "
        "session ends. Do not append `&` yourself."
    )
    input_model: type[BaseModel] = BashInput
    kind: ToolKind = "execute"

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self.sandbox = sandbox
        if sandbox is not None:
            self.description = BashTool.description + _sandbox_note(sandbox)

    def is_read_only(self, args: BashInput) -> bool:
        """True only for commands on the conservative inspection allow-list."""
        return is_read_only_command(args.command)

    def title(self, args: BashInput) -> str:
        """The description, or the command shortened to one line."""
        text = args.description or " ".join(args.command.split())
        text = text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
        return f"{text} (in the background)" if args.run_in_background else text

    def rule_content(self, args: BashInput, cwd: Path) -> str | None:
        """Permission rules match the command text."""
        return args.command

    async def run(self, args: BashInput, ctx: ToolContext) -> ToolOutput:
        """Run the command; kill its process group on timeout or cancellation."""
        if args.run_in_background:
            return await _start_in_background(args, self.argv(args.command, ctx), ctx)
        timeout_ms = min(args.timeout or DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
        buffer = OutputBuffer()
        # The files a command that may write changes are checkpointed, for a rewind.
        watch = contextlib.nullcontext() if self.is_read_only(args) else ctx.checkpoints.command()
        argv = self.argv(args.command, ctx)
        terminal = ctx.workspace.terminal
        if terminal is not None:
            # The editor runs it in a terminal the user watches (ACP's terminal/*).
            async with watch:
                ran = await terminal.run(argv, ctx.cwd, timeout_ms / 1000, ctx.tool_call_id)
            return _terminal_result(ran, timeout_ms)
        async with watch, spawn_shell(argv, ctx.cwd) as (process, output):
            pump = asyncio.create_task(pump_output(output, buffer, ProgressLines(ctx.progress)))
            try:
                async with asyncio.timeout(timeout_ms / 1000):
                    code = await wait_for_exit(process, pump)
            except TimeoutError:
                # Shielded (here and below) so a cancel cannot leave the group half killed.
                await asyncio.shield(kill_process_group(process.pid))
                await asyncio.wait({pump}, timeout=DRAIN_AFTER_EXIT_SECONDS)
                return _timed_out(buffer, timeout_ms)
            except asyncio.CancelledError:
                await asyncio.shield(kill_process_group(process.pid))
                raise
            finally:
                pump.cancel()
        return _result(buffer.render(), code, buffer.truncated)

    def argv(self, command: str, ctx: ToolContext) -> list[str]:
        """The command line that runs `command`: bash, inside the sandbox when there is one."""
        argv = ["/bin/bash", "-c", command]
        if self.sandbox is None:
            return argv
        if self.sandbox.problem is not None:
            raise ToolError(self.sandbox.problem)
        writable = self.sandbox.writable_paths(ctx.cwd, ctx.workspace.roots)
        return self.sandbox.wrap(argv, ctx.cwd, writable)


def _sandbox_note(sandbox: Sandbox) -> str:
    network = "" if sandbox.settings.network else " and has no network"
    return (
        " Commands run in a sandbox: everything outside the workspace and /tmp is read-only"
        f"{network}; a failure that says so is the sandbox, not a bug to work around."
    )


async def _start_in_background(args: BashInput, argv: list[str], ctx: ToolContext) -> ToolOutput:
    """Start the command as a background shell (in the sandbox, as any Bash command)."""
    if ctx.shells is None:
        raise ToolError("Background shells are not available here; run it without it.")
    shell = await ctx.shells.start(args.command, argv, ctx.cwd, args.description)
    return ToolOutput(
        f"Command running in the background with ID: {shell.shell_id} (pid {shell.pid}). "
        f'Read its output with BashOutput {{"shell_id": "{shell.shell_id}"}}; stop it with '
        "KillShell. You will be told when it exits."
    )


_FIND_ACTIONS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_GIT_READ_ONLY = frozenset(
    {"status", "diff", "log", "show", "branch", "rev-parse", "ls-files", "blame", "grep"}
)
_GIT_BRANCH_LIST_FLAGS = frozenset(
    {"-a", "-r", "-v", "-vv", "--all", "--remotes", "--verbose", "--show-current"}
)
_PLAIN_PROGRAMS = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "pwd",
        "echo",
        "which",
        "stat",
        "du",
        "df",
        "cut",
        "diff",
    }
)


def _no_flag(args: list[str], *flags: str) -> bool:
    """None of `args` is one of `flags`, alone or with an attached value."""
    return not any(arg == flag or arg.startswith(flag + "=") for arg in args for flag in flags)


def _short_flag_free(args: list[str], letter: str) -> bool:
    """No short-option cluster (`-o`, `-no`, `-ofile`) contains `letter`."""
    return not any(
        arg.startswith("-") and not arg.startswith("--") and letter in arg[1:] for arg in args
    )


def _git_branch_is_listing(args: list[str]) -> bool:
    if "--list" in args or "-l" in args:
        return _no_flag(args, "-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy")
    return all(arg in _GIT_BRANCH_LIST_FLAGS for arg in args)


def _git_is_read_only(args: list[str]) -> bool:
    # Global options (-c, -C, --exec-path, ...) come before the subcommand and are refused.
    if not args or args[0] not in _GIT_READ_ONLY:
        return False
    subcommand, rest = args[0], args[1:]
    if subcommand == "branch":
        return _git_branch_is_listing(rest)
    if subcommand == "grep":
        return _no_flag(rest, "--open-files-in-pager") and _short_flag_free(rest, "O")
    return _no_flag(rest, "--output", "--ext-diff")


def _program_is_read_only(program: str, args: list[str], expands: bool) -> bool:
    if program in _PLAIN_PROGRAMS:
        return True
    # These programs have flags that write or run things; an expansion (a glob matching a
    # file named `--output=x`, say) could smuggle one past the checks below.
    if expands:
        return False
    checks: dict[str, Callable[[list[str]], bool]] = {
        "find": lambda a: not any(arg in _FIND_ACTIONS for arg in a),
        "rg": lambda a: _no_flag(a, "--pre"),
        "sort": lambda a: (
            _no_flag(a, "--output", "--compress-program") and _short_flag_free(a, "o")
        ),
        "tree": lambda a: _short_flag_free(a, "o") and _short_flag_free(a, "R"),
        "file": lambda a: _no_flag(a, "--compile") and _short_flag_free(a, "C"),
        "uniq": lambda a: sum(not arg.startswith("-") for arg in a) <= 1,
        "git": _git_is_read_only,
    }
    check = checks.get(program)
    return check is not None and check(args)


# The only shell syntax a read-only line may use: plain commands joined by these.
_READ_ONLY_SYNTAX = frozenset({"|", "||", "&&", ";"})


def is_read_only_command(command: str) -> bool:
    """Whether every program in the command is on the inspection allow-list."""
    script = parse_script(command)
    if not script.certain or not script.commands or script.syntax - _READ_ONLY_SYNTAX:
        return False
    return all(_command_is_read_only(part) for part in script.commands)


def _command_is_read_only(part: SimpleCommand) -> bool:
    if part.nested or part.redirects or part.assignments or not part.words:
        return False
    program = part.words[0]
    if not program.literal or "/" in program.text:
        return False
    expands = not all(word.literal for word in part.words[1:])
    return _program_is_read_only(program.text, list(part.argv[1:]), expands)
