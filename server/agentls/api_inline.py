"""The wire model of agent/inlineEdit: an instruction for a region of one file, run as a
turn of the session (its result is agent/submitMessage's)."""

from __future__ import annotations

from pydantic import Field

from agentls.api_base import ParamsModel, WireRange


class InlineEditParams(ParamsModel):
    session_id: str
    # A file:// URI of an existing text file in the session's workspace.
    uri: str
    # The selected region, within the file's text (the editor's buffer when it is open).
    range: WireRange
    instruction: str = Field(min_length=1, max_length=20_000)
