"""One editor connection's side of a session's workspace: its buffers, editor state, edit sink.

Several editor windows may attach to one session. The session reads the buffers, sees the
editor state and sends its edits through one of them at a time: the window the user last
wrote from. Rebinding swaps all three together, so a session never reads one window's
buffers and edits through another's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.workspace.client_side import EditorBuffers, EditorTerminal
from agentls.workspace.intel import EditorIntel
from agentls.workspace.view import DiskSink, EditorState, EditSink, OpenDocument, WorkspaceView


@dataclass(slots=True)
class EditorLink:
    documents: dict[Path, OpenDocument] = field(default_factory=dict)
    editor: EditorState = field(default_factory=EditorState)
    # None: no editor to apply edits, so they are written to disk.
    sink: EditSink | None = None
    # The client's settings layer (initializationOptions) and its workspace folders.
    options: Mapping[str, Any] = field(default_factory=dict)
    roots: Sequence[Path] = ()
    # The editor's diagnostics and "show this place", when it offers them.
    intel: EditorIntel | None = None
    # An editor that gives file text on request (its unsaved buffers), and one that runs
    # commands in its own terminal (both ACP's; an LSP editor pushes buffers instead).
    buffers: EditorBuffers | None = None
    terminal: EditorTerminal | None = None


def bind(view: WorkspaceView, link: EditorLink) -> None:
    """Make `view` read and write through `link` from now on."""
    view.documents = link.documents
    view.editor = link.editor
    view.sink = link.sink or DiskSink()
    view.intel = link.intel
    view.buffers = link.buffers
    view.terminal = link.terminal
