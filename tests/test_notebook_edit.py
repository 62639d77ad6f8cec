"""NotebookEdit and Read of notebooks: cells replaced, inserted and deleted in the JSON,
every other byte kept in the file's own style; then over stdio, reviewed like Edit."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_client import AgentClient, read_requests
from agentls.tools.base import ToolContext, ToolError, ToolOutput
from agentls.tools.files import ReadTool
from agentls.tools.notebook import NotebookEditInput, NotebookEditTool, ReviewedNotebookEdit
from agentls.tools.read_cache import FileReadCache
from agentls.workspace.view import WorkspaceView

NOTEBOOK: dict[str, Any] = {
    "cells": [
        {
            "cell_type": "markdown",
            "id": "intro01",
            "metadata": {},
            "source": ["# Prices\n", "Café data, in €."],
        },
        {
            "cell_type": "code",
            "execution_count": 3,
            "id": "load02",
            "metadata": {"tags": ["setup"]},
            "outputs": [
                {"name": "stdout", "output_type": "stream", "text": ["loaded 3 rows\n"]},
                {
                    "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure 1>"]},
                    "execution_count": 3,
                    "metadata": {},
                    "output_type": "execute_result",
                },
            ],
            "source": ["import pandas as pd\n", "df = pd.read_csv('prices.csv')"],
        },
        {
            "cell_type": "code",
            "execution_count": 4,
            "id": "fail03",
            "metadata": {},
            "outputs": [
                {
                    "ename": "ZeroDivisionError",
                    "evalue": "division by zero",
                    "output_type": "error",
                    "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"],
                }
            ],
            "source": ["1 / 0"],
        },
    ],
    "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}


def jupyter_bytes(notebook: dict[str, Any]) -> bytes:
    """A notebook exactly as Jupyter (nbformat.write) writes it."""
    text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


@pytest.fixture
def ctx(root: Path) -> ToolContext:
    return ToolContext(WorkspaceView([root]), FileReadCache(), root)


@pytest.fixture
def notebook(root: Path) -> Path:
    path = root / "prices.ipynb"
    path.write_bytes(jupyter_bytes(NOTEBOOK))
    return path


async def read(ctx: ToolContext, path: str, **extra: Any) -> ToolOutput:
    return await ReadTool().run(
        ReadTool.input_model.model_validate({"file_path": path, **extra}), ctx
    )


async def edit(ctx: ToolContext, **raw: Any) -> ToolOutput:
    raw.setdefault("notebook_path", "prices.ipynb")
    return await NotebookEditTool().run(NotebookEditInput.model_validate(raw), ctx)


async def test_read_shows_cells_with_ids_types_sources_and_text_outputs(
    ctx: ToolContext, notebook: Path
) -> None:
    out = await read(ctx, "prices.ipynb")
    assert out.content == "\n".join(
        [
            "Notebook prices.ipynb: 3 cells, nbformat 4.5, python",
            '<cell number="0" id="intro01" type="markdown">',
            "# Prices",
            "Café data, in €.",
            "</cell>",
            '<cell number="1" id="load02" type="code" execution_count="3">',
            "import pandas as pd",
            "df = pd.read_csv('prices.csv')",
            '<output type="stream" name="stdout">',
            "loaded 3 rows",
            "</output>",
            '<output type="execute_result">',
            "<Figure 1>",
            "[image/png output not shown]",
            "</output>",
            "</cell>",
            '<cell number="2" id="fail03" type="code" execution_count="4">',
            "1 / 0",
            '<output type="error">',
            "ZeroDivisionError: division by zero",
            "</output>",
            "</cell>",
            "(Change cells with NotebookEdit, by id or number. Read with offset or limit shows "
            "the file's JSON lines.)",
        ]
    )


async def test_read_with_a_window_shows_the_json_lines(ctx: ToolContext, notebook: Path) -> None:
    out = await read(ctx, "prices.ipynb", offset=1, limit=2)
    assert out.content.startswith('     1\t{\n     2\t "cells": [')


async def test_a_file_that_is_not_a_notebook_reads_as_lines(ctx: ToolContext, root: Path) -> None:
    (root / "broken.ipynb").write_text('{"cells": ', encoding="utf-8")
    out = await read(ctx, "broken.ipynb")
    assert out.content == '     1\t{"cells": '


async def test_replace_keeps_every_other_byte_and_clears_the_outputs(
    ctx: ToolContext, notebook: Path
) -> None:
    await read(ctx, "prices.ipynb")
    out = await edit(ctx, cell_id="load02", new_source="df = load()\nprint(df)\n")
    assert out.content == "Replaced cell load02 (number 1) in prices.ipynb."
    expected = copy.deepcopy(NOTEBOOK)
    cell = expected["cells"][1]
    cell.update(source=["df = load()\n", "print(df)\n"], outputs=[], execution_count=None)
    assert notebook.read_bytes() == jupyter_bytes(expected)
    assert out.diff is not None and out.diff.old_text == jupyter_bytes(NOTEBOOK).decode()


async def test_replace_can_change_the_cell_type(ctx: ToolContext, notebook: Path) -> None:
    await read(ctx, "prices.ipynb")
    await edit(ctx, cell_number=2, new_source="Division, explained.", cell_type="markdown")
    expected = copy.deepcopy(NOTEBOOK)
    expected["cells"][2] = {
        "cell_type": "markdown",
        "id": "fail03",
        "metadata": {},
        "source": ["Division, explained."],
    }
    assert notebook.read_bytes() == jupyter_bytes(expected)


async def test_insert_after_a_cell_gives_the_new_cell_an_id(
    ctx: ToolContext, notebook: Path
) -> None:
    await read(ctx, "prices.ipynb")
    out = await edit(
        ctx, edit_mode="insert", cell_id="intro01", cell_type="code", new_source="x = 1"
    )
    new_id = re.fullmatch(
        r"Inserted a code cell ([0-9a-f]{8}) \(number 1\) in prices\.ipynb\.", out.content
    )
    assert new_id is not None
    expected = copy.deepcopy(NOTEBOOK)
    expected["cells"].insert(
        1,
        {
            "cell_type": "code",
            "execution_count": None,
            "id": new_id.group(1),
            "metadata": {},
            "outputs": [],
            "source": ["x = 1"],
        },
    )
    assert notebook.read_bytes() == jupyter_bytes(expected)


async def test_insert_at_the_start_and_at_the_end(ctx: ToolContext, notebook: Path) -> None:
    await read(ctx, "prices.ipynb")
    await edit(ctx, edit_mode="insert", cell_type="markdown", new_source="First")
    await edit(ctx, edit_mode="insert", cell_number=4, cell_type="markdown", new_source="Last")
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    assert [c["source"] for c in cells] == [
        ["First"],
        *[c["source"] for c in NOTEBOOK["cells"]],
        ["Last"],
    ]


async def test_delete_removes_only_that_cell(ctx: ToolContext, notebook: Path) -> None:
    await read(ctx, "prices.ipynb")
    out = await edit(ctx, edit_mode="delete", cell_id="fail03", new_source="")
    assert out.content == "Deleted cell fail03 (number 2) in prices.ipynb."
    expected = copy.deepcopy(NOTEBOOK)
    del expected["cells"][2]
    assert notebook.read_bytes() == jupyter_bytes(expected)


async def test_a_bad_cell_id_is_an_error_naming_the_ids(ctx: ToolContext, notebook: Path) -> None:
    await read(ctx, "prices.ipynb")
    with pytest.raises(ToolError) as error:
        await edit(ctx, cell_id="nope", new_source="x")
    assert str(error.value) == (
        "No cell with id 'nope' in prices.ipynb. Its cell ids: intro01, load02, fail03. "
        "Read it to see them."
    )
    assert notebook.read_bytes() == jupyter_bytes(NOTEBOOK)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"cell_number": 3, "new_source": "x"}, "cell_number 3 is out of range"),
        ({"new_source": "x"}, "Name the cell to replace with cell_id or cell_number"),
        ({"edit_mode": "insert", "new_source": "x"}, "cell_type (code or markdown) is required"),
        ({"cell_id": "load02", "cell_number": 1, "new_source": "x"}, "not both"),
    ],
)
async def test_bad_targets_are_errors(
    ctx: ToolContext, notebook: Path, raw: dict[str, Any], message: str
) -> None:
    await read(ctx, "prices.ipynb")
    with pytest.raises(ToolError, match=re.escape(message)):
        await edit(ctx, **raw)
    assert notebook.read_bytes() == jupyter_bytes(NOTEBOOK)


async def test_the_notebook_must_be_read_first_and_unchanged_since(
    ctx: ToolContext, notebook: Path
) -> None:
    with pytest.raises(ToolError, match="has not been read yet"):
        await edit(ctx, cell_id="load02", new_source="x")
    await read(ctx, "prices.ipynb")
    notebook.write_bytes(jupyter_bytes({**NOTEBOOK, "cells": NOTEBOOK["cells"][:1]}))
    with pytest.raises(ToolError, match="has been modified since it was last read"):
        await edit(ctx, cell_id="intro01", new_source="x")


async def test_a_file_in_another_style_keeps_its_style(ctx: ToolContext, root: Path) -> None:
    # Indent 2, keys unsorted, non-ASCII escaped, no final newline; nbformat 4.4 (no ids).
    original = {
        "nbformat_minor": 4,
        "nbformat": 4,
        "metadata": {},
        "cells": [
            {"source": "print('é')", "cell_type": "code", "metadata": {}, "outputs": []},
            {"source": ["note"], "cell_type": "markdown", "metadata": {}},
        ],
    }
    path = root / "old.ipynb"
    path.write_text(json.dumps(original, indent=2), encoding="utf-8")
    await read(ctx, "old.ipynb")
    await edit(ctx, notebook_path="old.ipynb", cell_number=0, new_source="print('ü')")
    await edit(
        ctx,
        notebook_path="old.ipynb",
        edit_mode="insert",
        cell_number=2,
        cell_type="markdown",
        new_source="end\n",
    )
    expected = copy.deepcopy(original)
    cells = expected["cells"]
    assert isinstance(cells, list)
    cells[0].update(source="print('ü')", execution_count=None)
    cells.append({"cell_type": "markdown", "metadata": {}, "source": ["end\n"]})
    assert path.read_text(encoding="utf-8") == json.dumps(expected, indent=2)


async def test_only_nbformat_4_notebooks_are_edited(ctx: ToolContext, root: Path) -> None:
    (root / "v3.ipynb").write_text('{"nbformat": 3, "worksheets": [], "cells": []}\n')
    (root / "notes.txt").write_text("x\n")
    await read(ctx, "v3.ipynb")
    with pytest.raises(ToolError, match="only nbformat 4"):
        await edit(
            ctx, notebook_path="v3.ipynb", edit_mode="insert", cell_type="code", new_source=""
        )
    with pytest.raises(ToolError, match="not a Jupyter notebook"):
        await edit(ctx, notebook_path="notes.txt", cell_number=0, new_source="")


async def test_the_proposed_change_and_a_reviewed_text(ctx: ToolContext, notebook: Path) -> None:
    tool = NotebookEditTool()
    args = NotebookEditInput(notebook_path="prices.ipynb", cell_id="fail03", new_source="2 / 1")
    proposed = tool.proposed_change(args, ctx)
    assert proposed is not None and proposed.old_text == jupyter_bytes(NOTEBOOK).decode()
    assert json.loads(proposed.new_text)["cells"][2]["source"] == ["2 / 1"]
    # The user edits the proposal in review; that text is what gets written.
    accepted = proposed.new_text.replace('"2 / 1"', '"3 / 1"')
    revised = tool.revised_input(args, proposed.old_text, accepted)
    assert isinstance(revised, ReviewedNotebookEdit)
    await read(ctx, "prices.ipynb")
    await tool.run(revised, ctx)
    assert notebook.read_text(encoding="utf-8") == accepted
    broken = tool.revised_input(args, accepted, "{not json")
    with pytest.raises(ToolError, match="not valid notebook JSON"):
        await tool.run(broken, ctx)
    assert notebook.read_text(encoding="utf-8") == accepted


# --- over stdio -----------------------------------------------------------------------------


@pytest.fixture
def workspace_files() -> dict[str, str | bytes]:
    return {"prices.ipynb": jupyter_bytes(NOTEBOOK)}


def calls(*tool_calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"id": i, "name": n, "input": a} for i, n, a in tool_calls]}


def final_update(client: AgentClient, call_id: str) -> dict[str, Any]:
    return [
        e
        for e in client.events.of_type("tool_call_update")
        if e["toolCallId"] == call_id and e["status"] != "in_progress"
    ][-1]


async def test_read_then_edit_a_notebook_over_stdio(client: AgentClient, tmp_path: Path) -> None:
    path = {"notebook_path": "prices.ipynb"}
    script = [
        calls(("r1", "Read", {"file_path": "prices.ipynb"})),
        calls(("e1", "NotebookEdit", {**path, "cell_id": "nope", "new_source": "x"})),
        calls(("e2", "NotebookEdit", {**path, "cell_id": "fail03", "new_source": "2 / 1"})),
        calls(
            (
                "e3",
                "NotebookEdit",
                {**path, "edit_mode": "delete", "cell_number": 0, "new_source": ""},
            )
        ),
        {"text": "Fixed the division and dropped the title."},
    ]
    session, log = await client.scripted_session(tmp_path, script, permissionMode="acceptEdits")
    _turn, done = await client.run_turn(session, "fix the notebook")
    assert done["stopReason"] == "end_turn"
    shown = final_update(client, "r1")["content"]
    assert '<cell number="2" id="fail03" type="code" execution_count="4">' in shown
    bad = final_update(client, "e1")
    assert bad["status"] == "failed" and "No cell with id 'nope'" in bad["content"]
    assert (
        final_update(client, "e2")["content"] == "Replaced cell fail03 (number 2) in prices.ipynb."
    )
    assert final_update(client, "e2")["diff"]["path"].endswith("prices.ipynb")
    assert (
        final_update(client, "e3")["content"] == "Deleted cell intro01 (number 0) in prices.ipynb."
    )
    expected = copy.deepcopy(NOTEBOOK)
    expected["cells"][2].update(source=["2 / 1"], outputs=[], execution_count=None)
    del expected["cells"][0]
    assert (tmp_path / "ws" / "prices.ipynb").read_bytes() == jupyter_bytes(expected)
    # The model saw the failure and went on.
    results = read_requests(log)[2]["messages"][-1]["content"]
    assert results[0]["is_error"] is True


async def test_a_notebook_edit_asks_with_the_diff_in_default_mode(
    client: AgentClient, tmp_path: Path
) -> None:
    edit_call = {"notebook_path": "prices.ipynb", "cell_id": "fail03", "new_source": "2 / 1"}
    script = [
        calls(("r1", "Read", {"file_path": "prices.ipynb"})),
        calls(("e1", "NotebookEdit", edit_call)),
        {"text": "Done."},
    ]
    session, _log = await client.scripted_session(tmp_path, script)
    result = await client.request("agent/submitMessage", {"sessionId": session, "text": "fix it"})
    request = await client.events.wait_for(lambda e: e["type"] == "permission_request")
    assert request["toolCallId"] == "e1" and request["title"] == "NotebookEdit prices.ipynb"
    assert request["diff"]["oldText"] == jupyter_bytes(NOTEBOOK).decode()
    assert json.loads(request["diff"]["newText"])["cells"][2]["source"] == ["2 / 1"]
    rules = [o.get("rule") for o in request["options"] if o["kind"] == "allow_always"]
    assert rules == ["Edit(./prices.ipynb)"]
    answer = {"sessionId": session, "requestId": request["requestId"], "optionId": "allow_once"}
    await client.request("agent/respondPermission", answer)
    done = await client.events.turn_completed(result["turnId"])
    assert done["stopReason"] == "end_turn"
    written = json.loads((tmp_path / "ws" / "prices.ipynb").read_text(encoding="utf-8"))
    assert written["cells"][2]["source"] == ["2 / 1"]
