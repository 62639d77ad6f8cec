"""The ACP outbox when a waiter goes away: a `flushed()` whose caller was cancelled (its
request cancelled, the connection closing) leaves the queue as it was; and what the
envelope drops before the SDK sees it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from acp import schema as acp

from agentls.acp import envelope
from agentls.acp.outbox import Outbox


class _Client:
    """Records the updates the outbox writes; each write waits for `gate`."""

    def __init__(self) -> None:
        self.updates: list[str] = []
        self.gate = asyncio.Event()

    async def session_update(self, session_id: str, update: Any) -> None:
        await self.gate.wait()
        self.updates.append(update.content.text)


def _chunk(text: str) -> acp.AgentMessageChunk:
    return acp.AgentMessageChunk(
        session_update="agent_message_chunk", content=acp.TextContentBlock(type="text", text=text)
    )


async def test_a_cancelled_flush_waiter_breaks_nothing(caplog: pytest.LogCaptureFixture) -> None:
    client = _Client()
    outbox = Outbox(lambda: client)
    outbox.send("s", _chunk("one"))
    # The update is held (a client slow to read): this waiter's mark is queued behind it.
    gone = asyncio.create_task(outbox.flushed())
    await asyncio.sleep(0)
    gone.cancel()
    with caplog.at_level(logging.ERROR, logger="agentls.acp.outbox"):
        outbox.send("s", _chunk("two"))
        later = asyncio.create_task(outbox.flushed())
        client.gate.set()
        await asyncio.wait_for(later, 10)
    assert gone.cancelled()
    assert client.updates == ["one", "two"]
    # The mark of the cancelled waiter once set a result on a cancelled future.
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    outbox.close()


def test_a_notification_of_no_method_is_dropped_before_the_sdk() -> None:
    # The SDK logged a traceback naming the whole method (the fuzzer's are 200,000 chars).
    huge = "a" * 200_000
    refusal = envelope.check({"jsonrpc": "2.0", "method": huge, "params": {}})
    assert refusal is not None and not refusal.answer and len(refusal.message) < 200
    # An extension notification (`_…`) and session/cancel still reach the agent.
    assert envelope.check({"jsonrpc": "2.0", "method": "_x/y", "params": {}}) is None
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
    assert envelope.check(cancel) is None
