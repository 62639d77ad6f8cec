"""The built-in slash commands, and the catalog every session starts from.

Local ones (`/clear`, `/compact`, `/cost`, `/model`, `/mode`, `/help`) are answered by the
daemon without a model call; `/init` and `/review` are prompts a model turn runs, and a
project or user file of the same name replaces them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentls.commands.catalog import (
    CommandCatalog,
    CommandFolder,
    CommandSource,
    FixedCommands,
    SlashCommand,
)
from agentls.names import PERMISSION_MODES

INIT_PROMPT = """\
Look at this project and write an AGENTS.md file at its root: the instructions a coding \
agent reads before working here. If an AGENTS.md (or a CLAUDE.md, .cursorrules, \
.github/copilot-instructions.md or similar) already exists, read it first and improve it \
instead of starting over, keeping what is still true.

Find out, from the files themselves (README, build and package files, CI configuration, \
the source tree, a few representative modules and tests):
- how to install, build, lint, type-check and test, as exact commands, including how to \
run a single test;
- the architecture: the main parts, where they live, and how they depend on each other;
- the conventions the code follows (naming, error handling, formatting, typing) and any \
rule that is easy to break.

Keep it short and specific to this project: no generic advice, nothing a reader could \
guess, nothing you did not see in the files. Then write the file and say in two or three \
sentences what it contains."""

REVIEW_PROMPT = """\
Review the current changes in this repository as a careful senior engineer would.

1. See what changed: run `git status`, `git diff` and `git diff --staged` (when there is \
nothing uncommitted, review the last commit: `git show HEAD`). Read the surrounding code \
where a change cannot be judged from the diff alone.
2. Look for bugs first: wrong logic, unhandled errors and edge cases, races, resource \
leaks, security problems, broken compatibility; then missing or weak tests; then \
readability and consistency with the code around it.
3. Report the findings by severity, each with the file and line and a concrete fix. Say \
plainly when you find nothing serious. Do not change any file."""

BUILT_IN: tuple[SlashCommand, ...] = (
    SlashCommand(
        "clear", "Start the conversation afresh: empty the history and the plan", local=True
    ),
    SlashCommand(
        "compact",
        "Summarise the conversation so far to free context",
        "[instructions for the summary]",
        local=True,
    ),
    SlashCommand("cost", "Show what this session has spent: tokens, cost, turns", local=True),
    SlashCommand(
        "context",
        "Show what fills the context window: prompt, tools, memory, skills, messages",
        local=True,
    ),
    SlashCommand("model", "Show the model, or switch to another", "[model] [provider]", local=True),
    SlashCommand(
        "mode",
        "Show the permission mode, or set it",
        f"[{'|'.join(PERMISSION_MODES)}]",
        local=True,
    ),
    SlashCommand("help", "List the slash commands", local=True),
    SlashCommand(
        "init",
        "Look at the project and write AGENTS.md for agents (or improve the one there is)",
        "[what to focus on]",
        template=INIT_PROMPT,
    ),
    SlashCommand(
        "review",
        "Review the current changes (git diff) for bugs and problems",
        "[what to focus on]",
        template=REVIEW_PROMPT,
    ),
)


def standard_catalog(
    project: Path,
    user_home: Path | None = None,
    skills: Sequence[SlashCommand] = (),
    plugins: CommandSource | None = None,
) -> CommandCatalog:
    """The built-ins, then the plugins' (`/plugin:command`, `/command`), then the skills'
    `/<name>` commands, then the user's `~/.agentls/commands`, then the project's
    `.agentls/commands` (a later one wins on a name, so a command file of a skill's name
    replaces the skill's command)."""
    home = user_home if user_home is not None else Path.home()
    return CommandCatalog(
        [
            FixedCommands(BUILT_IN),
            plugins or FixedCommands(()),
            FixedCommands(tuple(skills)),
            CommandFolder(home / ".agentls" / "commands", "user"),
            CommandFolder(project / ".agentls" / "commands", "project"),
        ]
    )
