"""Long tool runs as LSP work-done progress, for editors that show it in their status bar.

A tool call that is still running after a second gets a progress token
(`window/workDoneProgress/create`), its output lines as reports, and an end when it
finishes. Everything is derived from the agent/event stream, so the core knows nothing of it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)
SHOW_AFTER = 1.0
REPORT_EVERY = 0.25
_FINISHED = frozenset({"completed", "failed", "cancelled", "declined"})


@dataclass(slots=True)
class _Run:
    call_id: str
    title: str
    timer: asyncio.Task[None] | None = None
    begun: bool = False
    last_report: float = 0.0

    @property
    def token(self) -> str:
        return f"agentls/{self.call_id}"


class ToolProgress:
    """Follows tool_call / tool_call_update events and mirrors slow calls as progress."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._titles: dict[str, str] = {}
        self._runs: dict[str, _Run] = {}

    def supported(self) -> bool:
        """Whether the client said it shows server-initiated progress."""
        window = self._server.client_capabilities.window
        return bool(window and window.work_done_progress)

    def on_event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "tool_call":
            self._titles[payload["toolCallId"]] = payload["title"]
        elif kind == "tool_call_update":
            self._on_update(payload["toolCallId"], payload["status"], payload.get("content"))

    def _on_update(self, call_id: str, status: str, content: str | None) -> None:
        run = self._runs.get(call_id)
        if status == "in_progress":
            if run is None:
                title = self._titles.pop(call_id, "Tool call")
                run = self._runs[call_id] = _Run(call_id, title)
                run.timer = asyncio.get_running_loop().create_task(self._show_later(run))
            elif content and run.begun:
                self._report(run, content)
        elif status in _FINISHED and run is not None:
            del self._runs[call_id]
            if run.timer is not None:
                run.timer.cancel()
            if run.begun:
                end = lsp.WorkDoneProgressEnd(message=status)
                self._server.work_done_progress.end(run.token, end)
        elif status in _FINISHED:
            self._titles.pop(call_id, None)

    async def _show_later(self, run: _Run) -> None:
        await asyncio.sleep(SHOW_AFTER)
        progress = self._server.work_done_progress
        try:
            await progress.create_async(run.token)
        except (JsonRpcException, RuntimeError) as exc:
            log.info("the client refused a progress token: %s", exc)
            return
        if self._runs.get(run.call_id) is not run:
            return  # finished while the client was answering
        progress.begin(run.token, lsp.WorkDoneProgressBegin(title=run.title, cancellable=False))
        run.begun = True

    def _report(self, run: _Run, content: str) -> None:
        now = time.monotonic()
        if now - run.last_report < REPORT_EVERY:
            return
        run.last_report = now
        lines = [line for line in content.splitlines() if line.strip()]
        message = lines[-1][:120] if lines else ""
        self._server.work_done_progress.report(
            run.token, lsp.WorkDoneProgressReport(message=message)
        )
