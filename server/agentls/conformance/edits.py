"""The position-encoding checks: an edit's ranges, a selection and workspace/applyEdit
round-trip a line of multi-byte characters in UTF-8, UTF-16 and UTF-32."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.conformance.kit import Check, Context, turn
from agentls.conformance.rpc import Message

# --- editor state and edits in each position encoding ------------------------------------------

LINE = "naïve 😀 = 'ü'\n"


def _index(text: str, line: int, character: int, encoding: str) -> int:
    """A string index from an LSP position counted in `encoding`."""
    lines = text.split("\n")
    start = sum(len(before) + 1 for before in lines[:line])
    current = lines[line] if line < len(lines) else ""
    if encoding == "utf-32":
        return start + character
    unit = 2 if encoding == "utf-16" else 1
    counted = 0
    for i, char in enumerate(current):
        if counted >= character:
            return start + i
        size = len(char.encode("utf-16-le")) // 2 if unit == 2 else len(char.encode("utf-8"))
        counted += size
    return start + len(current)


def apply_edits(text: str, edits: list[Message], encoding: str) -> str:
    spans = [
        (
            _index(text, e["range"]["start"]["line"], e["range"]["start"]["character"], encoding),
            _index(text, e["range"]["end"]["line"], e["range"]["end"]["character"], encoding),
            e["newText"],
        )
        for e in edits
    ]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _round_trip(ctx: Context, encoding: str) -> None:
    with ctx.server([encoding]) as (server, result):
        negotiated = result["capabilities"].get("positionEncoding", "utf-16")
        assert negotiated == encoding, f"asked for {encoding}, got {negotiated}"
        workspace: Path = server.workspace  # type: ignore[attr-defined]
        path = workspace / "mod.py"
        path.write_text("x = 1\n", encoding="utf-8")
        buffer: dict[str, str] = {"text": "x = 1\n" + LINE}
        uri = path.as_uri()
        server.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "python",
                    "version": 1,
                    "text": buffer["text"],
                }
            },
        )

        def apply(params: Message) -> Message:
            for change in params["edit"].get("documentChanges", []):
                if change.get("textDocument", {}).get("uri") == uri:
                    buffer["text"] = apply_edits(buffer["text"], change["edits"], encoding)
            return {"applied": True}

        server.handlers["workspace/applyEdit"] = apply
        # The selection: "😀" on line 1, in the negotiated encoding.
        start = {"utf-8": 7, "utf-16": 6, "utf-32": 6}[encoding]
        width = {"utf-8": 4, "utf-16": 2, "utf-32": 1}[encoding]
        # An incremental change just after the emoji, counted in the same encoding.
        after = {"line": 1, "character": start + width}
        typed = {"range": {"start": after, "end": after}, "text": "!"}
        buffer["text"] = apply_edits(buffer["text"], [{**typed, "newText": "!"}], encoding)
        server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [typed]},
        )
        selection = {
            "start": {"line": 1, "character": start},
            "end": {"line": 1, "character": start + width},
        }
        server.notify("agent/didChangeEditorState", {"activeUri": uri, "selections": [selection]})
        edit = {"file_path": "mod.py", "old_string": "'ü'", "new_string": "'ö'"}
        session = ctx.script(
            server,
            [
                {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "mod.py"}}]},
                {"tool_calls": [{"id": "e", "name": "Edit", "input": edit}]},
                {"text": "Done."},
            ],
            permissionMode="acceptEdits",
            requestLog=str(workspace.parent / "requests.jsonl"),
        )
        _turn_id, done = turn(server, session, "edit")
        assert done["stopReason"] == "end_turn", done
        expected_text = "x = 1\n" + LINE.replace("😀", "😀!").replace("'ü'", "'ö'")
        assert buffer["text"] == expected_text, repr(buffer["text"])
        requests = (workspace.parent / "requests.jsonl").read_text(encoding="utf-8").splitlines()
        # The Read saw the buffer with the change applied where the client typed it.
        assert "naïve 😀! = 'ü'" in json.dumps(json.loads(requests[1]), ensure_ascii=False)
        # The selection reached the model as the one character it covers (code points).
        context = json.loads(requests[0])["messages"][0]["content"][0]["text"]
        expected = 'startLine="2" startCharacter="6" endLine="2" endCharacter="7">😀</selection>'
        assert expected in context, context


def _round_trip_in(encoding: str) -> Check:
    def run(ctx: Context) -> None:
        _round_trip(ctx, encoding)

    return run


EDIT_CHECKS: list[tuple[str, Check]] = [
    (f"didChange ranges, selection and applyEdit in {encoding}", _round_trip_in(encoding))
    for encoding in ("utf-8", "utf-16", "utf-32")
]
