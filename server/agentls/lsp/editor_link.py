"""What a session sees of one LSP client's editor: its buffers, editor state, edits,
settings, roots and language intelligence, as the core's EditorLink."""

from __future__ import annotations

from agentls.lsp.edit_sink import LspEditSink
from agentls.lsp.editor_intel import LspEditorIntel
from agentls.lsp.server import AgentServer
from agentls.workspace.link import EditorLink


def editor_link(client: AgentServer) -> EditorLink:
    """The link a session attached from `client` reads and edits through."""
    return EditorLink(
        client.documents,
        client.editor,
        LspEditSink(client),
        client.client_options,
        client.workspace_roots,
        LspEditorIntel(client),
    )
