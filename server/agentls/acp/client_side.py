"""What an ACP client does for a session when it offers to: give its text of a file
(`fs/read_text_file`, unsaved buffers included), write files through the editor
(`fs/write_text_file`, the counterpart of LSP's applyEdit, still in the write lane), and
run Bash in a terminal the user watches (`terminal/*`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import RequestError

from agentls.textfile import UTF8
from agentls.workspace.client_side import CommandResult
from agentls.workspace.view import EditRejected, FileEdit, write_edit

log = logging.getLogger(__name__)
READ_TIMEOUT = 10.0
WRITE_TIMEOUT = 60.0
# What a client terminal keeps of a command's output; the model gets head and tail of it.
OUTPUT_BYTES = 1_000_000
# Announces a call's terminal to the client (in order with the session's other updates).
TerminalShown = Callable[[str, str], Awaitable[None]]


async def _nothing_queued() -> None:
    return None


@dataclass(slots=True)
class SessionHandle:
    """The session these services act for: the core names it only once it exists. A
    request to the client waits for `flushed`, so the client has every update sent before
    it (a write comes after its call's `in_progress`)."""

    id: str = ""
    flushed: Callable[[], Awaitable[None]] = _nothing_queued


class ClientBuffers:
    """EditorBuffers over `fs/read_text_file`."""

    def __init__(self, client: Any, session: SessionHandle) -> None:
        self._client = client
        self._session = session

    async def read(self, path: Path) -> str | None:
        await self._session.flushed()
        try:
            answer = await asyncio.wait_for(
                self._client.read_text_file(session_id=self._session.id, path=str(path)),
                READ_TIMEOUT,
            )
        except (RequestError, TimeoutError, ConnectionError) as exc:
            log.info("fs/read_text_file %s: %s", path, exc)
            return None
        return str(answer.content)


class ClientEditSink:
    """EditSink over `fs/write_text_file`.

    The client writes text; a file stored in another encoding than UTF-8 (or with a byte
    order mark) is written here instead, so its bytes stay as they were. ACP has no
    delete: a rewind deletes from disk.
    """

    def __init__(self, client: Any, session: SessionHandle) -> None:
        self._client = client
        self._session = session

    async def apply(self, edit: FileEdit) -> None:
        if edit.encoding is not None and edit.encoding != UTF8 and edit.old_text is not None:
            write_edit(edit)
            return
        await self._session.flushed()
        try:
            await asyncio.wait_for(
                self._client.write_text_file(
                    session_id=self._session.id, path=str(edit.path), content=edit.new_text
                ),
                WRITE_TIMEOUT,
            )
        except TimeoutError:
            raise EditRejected(f"the editor did not answer within {WRITE_TIMEOUT:g} s") from None
        except (RequestError, ConnectionError) as exc:
            raise EditRejected(f"the editor did not write the file: {exc}") from None

    async def delete(self, path: Path) -> None:
        path.unlink(missing_ok=True)


class ClientTerminal:
    """EditorTerminal over `terminal/*`: create, show in the call, wait, read, release."""

    def __init__(self, client: Any, session: SessionHandle, shown: TerminalShown) -> None:
        self._client = client
        self._session = session
        self._shown = shown

    async def run(
        self, argv: list[str], cwd: Path, timeout_s: float, tool_call_id: str
    ) -> CommandResult:
        session_id = self._session.id
        await self._session.flushed()
        try:
            created = await self._client.create_terminal(
                session_id=session_id,
                command=argv[0],
                args=argv[1:],
                cwd=str(cwd),
                output_byte_limit=OUTPUT_BYTES,
            )
        except RequestError as exc:
            return CommandResult(f"The editor could not start a terminal: {exc}", 127)
        terminal_id = str(created.terminal_id)
        ids = {"session_id": session_id, "terminal_id": terminal_id}
        try:
            await self._shown(tool_call_id, terminal_id)
            timed_out = False
            try:
                async with asyncio.timeout(timeout_s):
                    ended = await self._client.wait_for_terminal_exit(**ids)
            except TimeoutError:
                timed_out = True
                await self._client.kill_terminal(**ids)
                ended = None
            output = await self._client.terminal_output(**ids)
            status = output.exit_status or ended
            return CommandResult(
                str(output.output),
                status.exit_code if status is not None and not timed_out else None,
                status.signal if status is not None else None,
                bool(output.truncated),
                timed_out,
            )
        except asyncio.CancelledError:
            # The turn was stopped: the command must stop too (shielded from the cancel).
            await asyncio.shield(self._quietly(self._client.kill_terminal(**ids)))
            raise
        except RequestError as exc:
            return CommandResult(f"The editor's terminal failed: {exc}", 1)
        finally:
            await asyncio.shield(self._quietly(self._client.release_terminal(**ids)))

    @staticmethod
    async def _quietly(call: Awaitable[Any]) -> None:
        with contextlib.suppress(RequestError, ConnectionError, TimeoutError):
            await asyncio.wait_for(call, READ_TIMEOUT)
