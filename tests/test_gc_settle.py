"""The daemon's startup objects are frozen out of the collector's rounds once, never again
(a later freeze would keep that moment's garbage cycles for good)."""

from __future__ import annotations

import gc

import pytest

from agentls.lsp import gc_settle
from agentls.lsp.gc_settle import daemon_process, freeze_startup_objects


def test_a_server_inside_another_program_leaves_its_collector_alone() -> None:
    gc.unfreeze()
    assert not freeze_startup_objects()
    assert gc.get_freeze_count() == 0


def test_startup_objects_are_frozen_the_first_time_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(gc_settle._OWN_PROCESS, "daemon", False)
    daemon_process()
    gc.unfreeze()
    try:
        assert freeze_startup_objects()
        frozen = gc.get_freeze_count()
        assert frozen > 0
        later = [[n] for n in range(1000)]  # tracked objects made after the first freeze
        assert not freeze_startup_objects()
        assert gc.get_freeze_count() == frozen
        assert gc.is_tracked(later[0])
    finally:
        gc.unfreeze()
