"""The Tool seam: typed input (a pydantic model), a kind, a read-only verdict, a run; a
generic base with fail-closed defaults, and mixins for read-only and path tools."""

from __future__ import annotations

import functools
import os
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from agentls.messages import ImageBlock
from agentls.names import PermissionMode
from agentls.tool_values import FileDiff, Location, PlanEntry, ToolKind
from agentls.tools.errors import ToolError as ToolError
from agentls.tools.read_cache import FileReadCache
from agentls.usage import Usage
from agentls.workspace.paths import PathOutsideWorkspace
from agentls.workspace.view import FileEdit, WorkspaceView

if TYPE_CHECKING:
    from agentls.tools.background import BackgroundShells


@dataclass(frozen=True, slots=True)
class ToolOutput:
    # The text the model and the client read; `images` go to the model after it.
    content: str
    is_error: bool = False
    diff: FileDiff | None = None
    truncated: bool = False
    # Every file's change, for a call that changed several (apply_patch).
    diffs: tuple[FileDiff, ...] | None = None
    images: tuple[ImageBlock, ...] = ()
    # The plan as the call left it (TodoWrite): sent to clients as a `plan` event.
    plan: tuple[PlanEntry, ...] | None = None
    # What a sub-agent spent (Task): it counts in the turn's usage and budget.
    usage: Usage | None = None
    # What `usage` cost in dollars; None when its price is unknown.
    cost_usd: float | None = None


@dataclass(slots=True)
class SessionData:
    """What the caller handed the session (structured data and intent), and what it learnt.

    It lives as long as the session and survives resume.
    """

    structured_data: Any = None
    user_intent: str | None = None
    completed_steps: list[str] = field(default_factory=list)
    pending_questions: list[dict[str, Any]] = field(default_factory=list)
    # The model's plan (TodoWrite); it outlives compaction, which restates it.
    plan: tuple[PlanEntry, ...] = ()


class UserQuestionCancelled(Exception):
    """The user's answer will never come: the turn was aborted or the client cannot ask."""


AskUser = Callable[[str, "list[str] | None"], Awaitable[str]]


async def _cannot_ask(question: str, choices: list[str] | None) -> str:
    raise UserQuestionCancelled("This client cannot ask the user questions.")


@dataclass(frozen=True, slots=True)
class PlanVerdict:
    """The user's answer to a plan (ExitPlanMode): approved (and the mode to carry it out
    in), sent back with feedback, or rejected."""

    choice: Literal["approve", "keep_planning", "reject"]
    mode: PermissionMode | None = None
    feedback: str | None = None


ReviewPlan = Callable[[str], Awaitable[PlanVerdict]]


async def _cannot_review(plan: str) -> PlanVerdict:
    raise UserQuestionCancelled("This client cannot ask the user to approve a plan.")


# Asks the user to let one command run outside the Bash sandbox: (command, reason, trigger)
# -> None when they allow it, else why it stays in (bound per call, like ask_user).
LeaveSandbox = Callable[[str, str, str], Awaitable["str | None"]]


async def _cannot_leave(command: str, reason: str, trigger: str) -> str | None:
    return "nobody can be asked here"


@dataclass(frozen=True, slots=True)
class SubagentCall:
    """A Task call: what to do, by which type of agent, for which call of the parent."""

    description: str
    prompt: str
    subagent_type: str
    tool_call_id: str
    background: bool = False
    # An earlier agent of the session to continue, with its history.
    resume: str | None = None
    # "worktree": the agent works in a git worktree of its own (see session/worktrees.py).
    isolation: str | None = None


class Subagents(Protocol):
    """Runs sub-agents for a session's Task tool (the session provides it)."""

    async def run(self, call: SubagentCall, progress: Callable[[str], None]) -> ToolOutput:
        """Run the child loop to its end; its report (or ToolError)."""


class Checkpoints(Protocol):
    """Keeps what files held before the agent changed them, so a turn can be undone."""

    def before_write(self, path: Path) -> None:
        """Keep `path`'s current content (once per turn) before a tool writes it."""

    def written(self, edit: FileEdit) -> None:
        """Note the content a write left in the file (for conflicts and diffs)."""

    def deleted(self, path: Path) -> None:
        """Note that a tool deleted (or moved away) `path`."""

    def command(self) -> AbstractAsyncContextManager[object]:
        """Around a shell command: the files it changes are kept as `before_write` would."""


class NoCheckpoints:
    """Nothing is kept (a context without a session, such as unit tests)."""

    def before_write(self, path: Path) -> None:
        return None

    def written(self, edit: FileEdit) -> None:
        return None

    def deleted(self, path: Path) -> None:
        return None

    def command(self) -> AbstractAsyncContextManager[object]:
        return nullcontext()


@dataclass(slots=True)
class ToolContext:
    workspace: WorkspaceView
    read_cache: FileReadCache
    cwd: Path
    # Progress text while the tool runs (e.g. Bash output lines); sent to the client as it comes.
    progress: Callable[[str], None] = field(default=lambda _text: None)
    data: SessionData = field(default_factory=SessionData)
    # Asks the user a question (with optional choices) and returns the answer; bound per call.
    ask_user: AskUser = _cannot_ask
    # The id of the call being run (bound per call), and the session's sub-agent runner.
    tool_call_id: str = ""
    subagents: Subagents | None = None
    # Seconds the editor gets to look again after a file change before its new errors are
    # read (tools/editor.py); 0: not read.
    diagnostics_wait: float = 0.0
    # The session's background shells (Bash run_in_background, BashOutput, KillShell).
    shells: BackgroundShells | None = None
    # The turn's file checkpoints (agent/rewind, agent/turnDiff).
    checkpoints: Checkpoints = field(default_factory=NoCheckpoints)
    # Asks the user to approve a plan (ExitPlanMode); bound per call, like ask_user.
    review_plan: ReviewPlan = _cannot_review
    # The session's permission mode, and the switch an approved plan makes (bound by the
    # session; a sub-agent's context has neither: it cannot leave plan mode).
    permission_mode: Callable[[], str] = field(default=lambda: "default")
    switch_mode: Callable[[PermissionMode], None] | None = None
    # Asks to rerun a command outside the sandbox (Bash), bound per call.
    leave_sandbox: LeaveSandbox = _cannot_leave
    # Why file tools may not write at all (a read-only sandbox), or None.
    file_writes_refused: str | None = None


@runtime_checkable
class ProposesChange(Protocol):
    """A tool that can say, before it runs, what a file would become (for review)."""

    def proposed_change(self, args: Any, ctx: ToolContext) -> FileDiff | None:
        """The file's text before and after the call, or None when it cannot be known."""

    def revised_input(self, args: Any, old_text: str | None, accepted: str) -> Any:
        """The call changed to leave `accepted` in the file (the user's review of it)."""


@runtime_checkable
class ProposesChanges(Protocol):
    """A tool that changes several files and can say, before it runs, what each becomes."""

    def proposed_changes(self, args: Any, ctx: ToolContext) -> tuple[FileDiff, ...] | None:
        """Every file's change, or None when the call would fail anyway."""


Args = TypeVar("Args", bound=BaseModel)
TITLE_CHARS = 80


class Tool(ABC, Generic[Args]):
    """A tool: typed input (a pydantic model), a kind, what it says about a call, a run.

    The defaults fail closed: a call is not read-only (it takes the write lane and meets
    the permission gate), names no file for the client to follow, and gives permission
    rules nothing to match. A tool says otherwise by overriding, or by taking a mixin.
    """

    name: str
    description: str
    input_model: type[BaseModel]
    kind: ToolKind = "other"
    # Whether a read-only call also skips asking (a tool whose read-only verdict is only
    # a third party's word, such as an MCP server's, shares the lane and still asks).
    read_only_skips_asking: bool = True

    def is_read_only(self, args: Args) -> bool:
        """Whether this call may run in the concurrent read lane (and skip asking)."""
        return False

    def refusal_before_asking(self, args: Args, ctx: ToolContext) -> str | None:
        """Why the call would fail whatever the user answers (so nobody is asked), or None."""
        return None

    def spec_schema(self) -> dict[str, Any] | None:
        """The input's JSON Schema as the model sees it, when not made from `input_model`."""
        return None

    def title(self, args: Args) -> str:
        """A one-line human title such as `Read src/app.py`."""
        return self.name

    def locations(self, args: Args, cwd: Path) -> list[Location]:
        """Files the call touches, for the client to follow."""
        return []

    def rule_content(self, args: Args, cwd: Path) -> str | None:
        """What permission rules match against: a path relative to cwd, or a command."""
        return None

    def rule_contents_in(self, args: Args, ctx: ToolContext) -> tuple[str | None, ...]:
        """What rules match for the call where it runs (the session's state can say more
        than its input: WriteStdin's rules match the shell's command)."""
        return self.rule_contents(args, ctx.cwd)

    def request_title(self, args: Args, ctx: ToolContext) -> str:
        """The title of the call's permission request (its title, unless the session's
        state says more about what the user approves)."""
        return self.title(args)

    def rule_contents(self, args: Args, cwd: Path) -> tuple[str | None, ...]:
        """Each thing rules match against, for a call on several paths: every one must be
        allowed, and a deny of any one denies the call."""
        return (self.rule_content(args, cwd),)

    @abstractmethod
    async def run(self, args: Args, ctx: ToolContext) -> ToolOutput:
        """Run the call; raise ToolError for failures the model should see."""


class ReadOnlyTool(Tool[Args]):
    """A tool whose every call only reads: concurrent, and never asking unless a rule says."""

    def is_read_only(self, args: Args) -> bool:
        return True


class PathTool(Tool[Args]):
    """A tool on one path the model names: titled `<Name> <path>`, locating that path, and
    matched by rules on it relative to cwd (absolute outside it)."""

    @abstractmethod
    def target(self, args: Args) -> str:
        """The path as the model gave it."""

    def title(self, args: Args) -> str:
        return f"{self.name} {self.target(args)}"

    def locations(self, args: Args, cwd: Path) -> list[Location]:
        return [Location(str(absolute_path(self.target(args), cwd)))]

    def rule_content(self, args: Args, cwd: Path) -> str | None:
        return display_path(absolute_path(self.target(args), cwd), cwd)


class ChangesReadFile(PathTool[Args]):
    """A change to a file the model must have read as it is now: a call on a file outside
    the workspace, one it has not read, or one that changed since, is refused before the
    user is asked to approve it."""

    def refusal_before_asking(self, args: Args, ctx: ToolContext) -> str | None:
        if ctx.file_writes_refused is not None:
            return ctx.file_writes_refused
        try:
            path = ctx.workspace.policy.resolve(self.target(args), ctx.cwd)
        except PathOutsideWorkspace as exc:
            # No answer lets a file tool leave the workspace, so nobody is asked.
            return str(exc)
        try:
            if not path.is_file() and path not in ctx.workspace.documents:
                return None
            return ctx.read_cache.stale_reason(path, ctx.workspace.read_text(path))
        except (OSError, ValueError):
            return None  # the call itself says what is wrong


def absolute_path(raw: str, cwd: Path) -> Path:
    """`raw` as an absolute, symlink-free path, without any workspace check."""
    # Joined as text: the same string to realpath as `cwd / Path(raw)`, two Paths fewer.
    return Path(os.path.realpath(os.path.join(cwd, os.path.expanduser(raw))))


def display_path(path: Path, cwd: Path) -> str:
    """`path` relative to cwd (posix) when it lies inside cwd, else absolute."""
    try:
        # One walk of the parts (is_relative_to would be a second); cwd itself is ".".
        return path.relative_to(_real_cwd(cwd)).as_posix()
    except ValueError:
        return str(path)


@functools.lru_cache(maxsize=256)
def _real_cwd(cwd: Path) -> Path:
    """A session's directory without symlinks, resolved once: every tool call shows paths
    relative to it. Kept because it only decides how a path is shown; what a call reads,
    writes or is permitted resolves its own path afresh each time."""
    return Path(os.path.realpath(cwd))


def short_title(prefix: str, text: str | None) -> str:
    """`prefix: <first line of text>`, the line cut at TITLE_CHARS."""
    lines = (text or "").strip().splitlines()
    if not lines:
        return prefix
    line = lines[0]
    if len(line) > TITLE_CHARS:
        line = line[:TITLE_CHARS] + "…"
    return f"{prefix}: {line}"
