"""The daemon's startup objects are frozen out of the collector's rounds once, never again
(a later freeze would keep that moment's garbage cycles for good)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from agentls.lsp import gc_settle
from agentls.lsp.gc_settle import daemon_process, freeze_startup_objects


def test_a_server_inside_another_program_leaves_its_collector_alone() -> None:
    gc.unfreeze()
    assert not freeze_startup_objects()
    assert gc.get_freeze_count() == 0


@pytest.fixture
def daemon(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process as a daemon that has not frozen anything yet; unfrozen after."""
    monkeypatch.setitem(gc_settle._OWN_PROCESS, "daemon", False)
    monkeypatch.setitem(gc_settle._OWN_PROCESS, "frozen", False)
    daemon_process()
    gc.unfreeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("daemon")
def test_startup_objects_are_frozen_the_first_time_only() -> None:
    assert freeze_startup_objects()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    later = [[n] for n in range(1000)]  # tracked objects made after the first freeze
    assert not freeze_startup_objects()
    # Nothing was frozen again: that would have taken `later`'s 1,000 lists too. (The count
    # may fall meanwhile: a frozen object still dies when another thread drops it.)
    assert gc.get_freeze_count() <= frozen
    assert gc.is_tracked(later[0])


@pytest.mark.usefixtures("daemon")
def test_later_connections_do_not_count_the_frozen_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each connection's `initialized` asks to freeze; after the first, the answer must not
    come from gc.get_freeze_count(), which walks every frozen object (25 ms a connection in
    a daemon holding the Anthropic SDK)."""
    assert freeze_startup_objects()
    counted: list[int] = []
    real_count = gc.get_freeze_count

    def counting() -> int:
        counted.append(1)
        return real_count()

    monkeypatch.setattr(gc, "get_freeze_count", counting)
    assert [freeze_startup_objects() for _ in range(3)] == [False, False, False]
    assert counted == []
