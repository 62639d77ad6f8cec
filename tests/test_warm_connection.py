"""The warm client's framing (agentls.warm.Connection) over a real socket pair: messages in
any cut of the byte stream come out whole and in order."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentls.warm import Connection


def framed(body: bytes, header: bytes = b"") -> bytes:
    return header + b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.fixture
def pair() -> Iterator[tuple[Connection, socket.socket]]:
    ours, theirs = socket.socketpair()
    yield Connection(ours), theirs
    ours.close()
    theirs.close()


def test_a_burst_of_messages_in_one_read_comes_out_in_order(
    pair: tuple[Connection, socket.socket],
) -> None:
    conn, daemon = pair
    events = [{"jsonrpc": "2.0", "method": "agent/event", "params": {"seq": n}} for n in range(500)]
    daemon.sendall(b"".join(framed(json.dumps(e).encode()) for e in events))
    assert [conn.receive(5) for _ in events] == events
    assert conn.receive(0) is None


def test_other_headers_and_any_case_are_read(pair: tuple[Connection, socket.socket]) -> None:
    conn, daemon = pair
    typed = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
    pygls = b"Content-Length: 8\r\n" + typed + b'\r\n{"id":2}'
    daemon.sendall(typed + b"content-LENGTH: 2\r\n\r\n{}" + framed(b'{"id":1}') + pygls)
    assert conn.receive(5) == {}
    assert conn.receive(5) == {"id": 1}
    assert conn.receive(5) == {"id": 2}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=60), min_size=1, max_size=40))
def test_messages_cut_anywhere_across_reads_come_out_whole(cuts: list[int]) -> None:
    messages = [{"id": n, "result": {"text": "é" * n}} for n in range(12)]
    stream = b"".join(framed(json.dumps(m, ensure_ascii=False).encode()) for m in messages)
    ours, theirs = socket.socketpair()
    try:
        conn = Connection(ours)
        received = []
        at = 0
        for size in cuts * (len(stream) // sum(cuts) + 1):
            if at >= len(stream):
                break
            theirs.sendall(stream[at : at + size])
            at += size
            while (message := conn.receive(0)) is not None:
                received.append(message)
        assert received == messages
    finally:
        ours.close()
        theirs.close()
