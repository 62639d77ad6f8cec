"""The channel between a turn's task and the task that sends its events: every event, in
order, in the batches a queue gave (what has come by the time the receiver runs)."""

from __future__ import annotations

import asyncio

from agentls.events import TextDeltaEvent
from agentls.loop.channel import EventChannel


async def test_the_receiver_takes_what_has_come_in_order_then_learns_the_end() -> None:
    channel = EventChannel()
    batches: list[list[str]] = []

    async def receive() -> None:
        while await channel.ready():
            batch = []
            while channel.events:
                batch.append(channel.events.popleft().text)  # type: ignore[union-attr]
            batches.append(batch)

    receiver = asyncio.create_task(receive())
    await asyncio.sleep(0)  # the receiver waits on an empty channel
    channel.put(TextDeltaEvent("m", "a"))
    channel.put(TextDeltaEvent("m", "b"))
    await asyncio.sleep(0)
    channel.put(TextDeltaEvent("m", "c"))
    channel.close()
    await asyncio.wait_for(receiver, 5)
    assert batches == [["a", "b"], ["c"]]


async def test_events_put_before_the_end_are_all_taken_after_it() -> None:
    channel = EventChannel()
    for text in "xyz":
        channel.put(TextDeltaEvent("m", text))
    channel.close()
    taken = []
    while await channel.ready():
        taken.append(channel.events.popleft())
    assert [e.text for e in taken if isinstance(e, TextDeltaEvent)] == ["x", "y", "z"]
    assert not await channel.ready()
