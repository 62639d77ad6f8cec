"""18 plan approval and the message shortcuts: what ExitPlanMode adds to a session's
requests, and the cost of a `!command`, a `# note` and `/context` turn against a model turn.

ExitPlanMode is offered only from a session's first time in plan mode on, so a session
that never plans sends the same first request as before; the row says what a planning
session's requests carry more. The local turns are timed in process (SessionManager, as
the daemon makes sessions; submit → turn_completed), beside a text-only turn of the
zero-latency scripted model, which is the floor any model turn costs.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from agentls.context.prompt import system_prompt
from agentls.messages import ToolSpec
from agentls.session.manager import SessionManager
from agentls.session.session import AgentSession
from agentls.session.slash import submit_message
from agentls.session.turn import Submission
from agentls.tools.exit_plan_mode import ExitPlanModeTool
from agentls.tools.registry import tool_spec
from agentls.wire import json_sink
from harness import Row, scratch, timing_rows

SECTION = "18 plan approval and shortcuts"


def _prefix_chars(specs: list[ToolSpec]) -> int:
    """The system prompt and tool definitions, in characters as JSON carries them."""
    system = system_prompt(None, "")
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in specs
    ]
    return len(system.static) + len(system.dynamic) + len(json.dumps(tools))


class _Driver:
    """A scripted session whose turns end a future each."""

    def __init__(self, home: Path) -> None:
        self._done: asyncio.Future[dict[str, Any]] | None = None
        self.manager = SessionManager(json_sink(self._sink), env={"AGENTLS_HOME": str(home)})

    def _sink(self, payload: dict[str, Any]) -> None:
        if payload["type"] == "turn_completed" and self._done is not None:
            self._done.set_result(payload)

    async def turn(self, session: AgentSession, text: str) -> float:
        self._done = asyncio.get_running_loop().create_future()
        start = time.perf_counter()
        await submit_message(self.manager, session, Submission(text))
        done = await self._done
        elapsed = time.perf_counter() - start
        if done["stopReason"] != "end_turn":
            raise RuntimeError(f"{text!r} ended {done['stopReason']}: {done.get('error')}")
        return elapsed


async def _time_turns(runs: int) -> tuple[dict[str, list[float]], int, int]:
    with scratch() as (home, workspace):
        driver = _Driver(home)
        script = [{"text": "Fine.", "usage": {"input_tokens": 10, "output_tokens": 2}}] * runs
        session = await driver.manager.create(workspace, {"provider": "scripted", "script": script})
        plain = session.registry.specs()
        samples: dict[str, list[float]] = {"model": [], "bang": [], "note": [], "context": []}
        for n in range(runs):
            samples["model"].append(await driver.turn(session, f"question {n}"))
            samples["bang"].append(await driver.turn(session, "!ls"))
            samples["note"].append(await driver.turn(session, f"# note {n}"))
            samples["context"].append(await driver.turn(session, "/context"))
        session.set_permission_mode("plan")
        planning = session.registry.specs()
        await driver.manager.close_all()
    return samples, _prefix_chars(plain), _prefix_chars(planning)


def run(quick: bool) -> list[Row]:
    runs = 10 if quick else 50
    samples, plain, planning = asyncio.run(_time_turns(runs))
    model = sorted(samples["model"])[len(samples["model"]) // 2]

    def versus(kind: str) -> str:
        median = sorted(samples[kind])[len(samples[kind]) // 2]
        return f"{median / model:.2f}× a model turn"

    exit_spec = _prefix_chars([tool_spec(ExitPlanModeTool())]) - _prefix_chars([])
    return [
        Row(SECTION, "first request prefix, a session never in plan mode", float(plain), "chars"),
        Row(
            SECTION,
            "prefix once the session has been in plan mode",
            float(planning),
            "chars",
            f"+{planning - plain:,} chars (ExitPlanMode's spec alone: {exit_spec:,})",
        ),
        *timing_rows(SECTION, "text-only model turn (scripted, zero latency)", samples["model"]),
        *timing_rows(SECTION, "`!ls` local turn (Bash, no model)", samples["bang"], versus("bang")),
        *timing_rows(SECTION, "`# note` local turn", samples["note"], versus("note")),
        *timing_rows(SECTION, "`/context` local turn", samples["context"], versus("context")),
    ]
