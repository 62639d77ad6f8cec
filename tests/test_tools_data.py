"""QueryData, SummarizeData, ValidateData and AskUser over a real nested orders dataset."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.validators import validator_for

from agentls import json_summary
from agentls.tools.ask_user import AskUserInput, AskUserTool
from agentls.tools.base import SessionData, Tool, ToolContext, ToolError, UserQuestionCancelled
from agentls.tools.data import (
    MAX_RESULT_CHARS,
    NULL_RESULT,
    QueryDataInput,
    QueryDataTool,
    SummarizeDataInput,
    SummarizeDataTool,
    ValidateDataInput,
    ValidateDataTool,
    json_path,
)
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry, default_tools, validate_input
from agentls.workspace.view import WorkspaceView

ORDERS: dict[str, Any] = {
    "shop": {
        "name": "Café Zoë",
        "open": True,
        "address": {"city": "Lyon", "geo": {"lat": 45.76, "lon": 4.84}},
    },
    "customers": [
        {"id": 1, "name": "Ada", "email": "ada@example.com", "vip": True},
        {"id": 2, "name": "Björn", "email": None, "vip": False},
        {"id": 3, "name": "Chloé", "email": "chloe@example.fr", "vip": False, "tags": ["new"]},
    ],
    "orders": [
        {
            "id": "o-1",
            "customer": 1,
            "status": "shipped",
            "total": 30,
            "paid": True,
            "items": [{"sku": "tea", "price": 10, "qty": 3}],
        },
        {
            "id": "o-2",
            "customer": 2,
            "status": "pending",
            "total": 12.5,
            "paid": False,
            "items": [
                {"sku": "cake", "price": 12.5, "qty": 1},
                {"sku": "tea", "price": 10, "qty": 0},
            ],
        },
        {"id": "o-3", "customer": 1, "status": "shipped", "total": None, "paid": True, "items": []},
        {
            "id": "o-4",
            "customer": 3,
            "status": "annulé",
            "total": 57.5,
            "items": [
                {"sku": "crème", "price": 7.5, "qty": 1},
                {"sku": "cake", "price": 12.5, "qty": 4},
            ],
        },
    ],
}


def context(data: Any = ORDERS, **kwargs: Any) -> ToolContext:
    root = Path(__file__).parent
    return ToolContext(
        WorkspaceView([root]), FileReadCache(), root, data=SessionData(data), **kwargs
    )


async def call(tool: Tool[Any], ctx: ToolContext, **raw: Any) -> str:
    args = validate_input(tool, raw)
    assert not isinstance(args, str), args
    output = await tool.run(args, ctx)
    assert not output.is_error
    return output.content


async def test_query_returns_pretty_json_keeping_unicode() -> None:
    ctx = context()
    assert await call(QueryDataTool(), ctx, expression="shop.name") == '"Café Zoë"'
    shipped = await call(QueryDataTool(), ctx, expression="orders[?total > `20`].id")
    assert shipped == '[\n  "o-1",\n  "o-4"\n]'
    assert await call(QueryDataTool(), ctx, expression="length(orders[].items[])") == "5"


async def test_query_projects_objects_and_sorts() -> None:
    out = await call(
        QueryDataTool(), context(), expression="sort_by(orders[?total], &total)[-2:].{id: id}"
    )
    assert json.loads(out) == [{"id": "o-1"}, {"id": "o-4"}]


async def test_query_that_matches_nothing_says_so() -> None:
    assert await call(QueryDataTool(), context(), expression="orders[0].nope") == NULL_RESULT


async def test_query_on_empty_data_is_still_data() -> None:
    assert await call(QueryDataTool(), context([]), expression="length(@)") == "0"


async def test_huge_result_is_cut_with_a_note_saying_how_much() -> None:
    rows = [{"id": n, "note": "ü" * 40} for n in range(2000)]
    full = json.dumps(rows, ensure_ascii=False, indent=2)
    output = await QueryDataTool().run(QueryDataInput(expression="@"), context(rows))
    assert output.truncated and not output.is_error
    body, note = output.content.split("\n\n[Truncated: ")
    assert len(body) <= MAX_RESULT_CHARS and full.startswith(body)
    assert f"showing {len(body):,} of {len(full):,} characters" in note
    assert f"{len(full) - len(body):,} were cut" in note
    assert "narrower expression" in note


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("orders[?total > ", "Invalid JMESPath expression 'orders[?total > ': "),
        ("orders[", "(at column 7)"),
        ("`abc", "Unclosed ` delimiter"),
        ("nope(orders)", "failed: Unknown function: nope()"),
        ("abs(shop.name)", "failed: In function abs(), invalid type"),
    ],
)
async def test_bad_expressions_are_tool_errors_with_the_parser_message(
    expression: str, expected: str
) -> None:
    with pytest.raises(ToolError, match="JMESPath expression") as caught:
        await call(QueryDataTool(), context(), expression=expression)
    assert expected in str(caught.value)


async def test_parse_errors_keep_the_column() -> None:
    with pytest.raises(ToolError, match="column 16"):
        await call(QueryDataTool(), context(), expression="orders[?total > 20]")


@pytest.mark.parametrize(
    ("tool", "raw"),
    [
        (QueryDataTool(), {"expression": "orders"}),
        (SummarizeDataTool(), {}),
        (ValidateDataTool(), {"schema": {"type": "object"}}),
    ],
)
async def test_without_structured_data_the_tools_say_there_is_none(
    tool: Tool, raw: dict[str, Any]
) -> None:
    with pytest.raises(ToolError, match="There is no structured data in this session"):
        await call(tool, context(None), **raw)


async def test_summary_of_a_nested_array_matches_hand_counts() -> None:
    out = await call(SummarizeDataTool(), context(), expression="orders[].items[]")
    assert out == "\n".join(
        [
            "Summary of the result of `orders[].items[]`:",
            "array of 5 items: object ×5",
            "  fields of its 5 objects:",
            "    sku: present in 5/5; string ×5",
            '      strings: 3 distinct; most common "cake" ×2, "tea" ×2, "crème" ×1; length 3–5',
            "    price: present in 5/5; number ×5",
            "      numbers: min 7.5, max 12.5, mean 10.5",
            "    qty: present in 5/5; number ×5",
            "      numbers: min 0, max 4, mean 1.8",
        ]
    )


async def test_summary_of_the_root_lists_keys_and_per_field_statistics() -> None:
    lines = (await call(SummarizeDataTool(), context())).splitlines()
    assert lines[:2] == ["Summary of the structured data:", "object with 3 keys"]
    expected = [
        '    name: string "Café Zoë"',
        "  customers: array of 3 items: object ×3",
        "      email: present in 3/3; string ×2, null ×1",
        "      tags: present in 1/3; array ×1",
        "        booleans: true ×1, false ×2",
        "      total: present in 4/4; number ×3, null ×1",
        # (30 + 12.5 + 57.5) / 3
        "        numbers: min 12.5, max 57.5, mean 33.33333333",
        "      paid: present in 3/4; boolean ×3",
        "        booleans: true ×2, false ×1",
        "        arrays: length 0–2 (5 items in total)",
        '        strings: 3 distinct; most common "shipped" ×2, "annulé" ×1, "pending" ×1; '
        "length 6–7",
        '        strings: 4 distinct (all different), e.g. "o-1", "o-2", "o-3"; length 3',
    ]
    for line in expected:
        assert line in lines, line


async def test_summary_stops_three_levels_down() -> None:
    lines = (await call(SummarizeDataTool(), context())).splitlines()
    assert "      geo: object with 2 keys" in lines
    assert not any("lat" in line for line in lines)


async def test_summary_of_mixed_scalars_counts_each_type() -> None:
    data = [1, "a", None, True, 2.5, "a", False, [1, 2], {"k": 1}]
    out = await call(SummarizeDataTool(), context(data))
    assert out.splitlines()[1:] == [
        "array of 9 items: object ×1, array ×1, string ×2, number ×2, boolean ×2, null ×1",
        "  numbers: min 1, max 2.5, mean 1.75",
        '  strings: 1 distinct; most common "a" ×2; length 1',
        "  booleans: true ×1, false ×1",
        "  arrays: length 2 (2 items in total)",
        "  fields of its 1 object:",
        "    k: present in 1/1; number ×1",
        "      numbers: min 1, max 1, mean 1",
    ]


async def test_summary_ranks_the_top_five_by_count_then_value() -> None:
    words = ["b"] * 3 + ["a"] * 3 + ["c", "d", "e", "f", "g"] + ["z"] * 2
    out = await call(SummarizeDataTool(), context(words))
    assert 'most common "a" ×3, "b" ×3, "z" ×2, "c" ×1, "d" ×1; length 1' in out
    assert "8 distinct" in out


async def test_summary_counts_distinct_strings_up_to_a_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(json_summary, "DISTINCT_CAP", 2)
    out = await call(SummarizeDataTool(), context(["x", "y", "x", "new", "y", "x"]))
    assert 'over 2 distinct; most common (of the first 2 seen) "x" ×3, "y" ×2; length 1–3' in out


async def test_summary_of_a_wide_object_lists_the_first_fifty_keys() -> None:
    wide = {f"k{n}": n for n in range(60)}
    lines = (await call(SummarizeDataTool(), context(wide))).splitlines()
    assert lines[-2:] == ["  k49: number 49", "  … and 10 more keys"]


async def test_summary_of_a_scalar_and_of_nothing() -> None:
    assert await call(SummarizeDataTool(), context("hé")) == (
        'Summary of the structured data:\nstring "hé"'
    )
    assert await call(SummarizeDataTool(), context(), expression="nope") == NULL_RESULT


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=8), children, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_summarize_never_raises_for_any_json(value: Any) -> None:
    tool = SummarizeDataTool()
    args = SummarizeDataInput()
    if value is None:
        with pytest.raises(ToolError):
            asyncio.run(tool.run(args, context(value)))
        return
    output = asyncio.run(tool.run(args, context(value)))
    assert output.content.startswith("Summary of the structured data:\n")
    assert not output.is_error


ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["orders"],
    "properties": {
        "orders": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "paid"],
                "properties": {
                    "total": {"type": "number"},
                    "status": {"enum": ["shipped", "pending"]},
                },
            },
        }
    },
}


async def test_validation_lists_every_error_by_path() -> None:
    out = await call(ValidateDataTool(), context(), schema=ORDER_SCHEMA)
    assert out.splitlines() == [
        "Invalid: 3 errors validating the structured data (object with 3 keys):",
        "$.orders[2].total: None is not of type 'number'",
        "$.orders[3]: 'paid' is a required property",
        "$.orders[3].status: 'annulé' is not one of ['shipped', 'pending']",
    ]


async def test_validation_sorts_indexes_as_numbers() -> None:
    rows = [{"n": n if n not in (2, 10) else str(n)} for n in range(12)]
    schema = {"items": {"properties": {"n": {"type": "integer"}}}}
    out = await call(ValidateDataTool(), context(rows), schema=schema)
    assert out.splitlines()[1:] == [
        "$[2].n: '2' is not of type 'integer'",
        "$[10].n: '10' is not of type 'integer'",
    ]


async def test_validation_of_a_sub_expression_says_what_was_validated() -> None:
    schema = {"type": "array", "items": {"required": ["id", "name"]}}
    out = await call(ValidateDataTool(), context(), schema=schema, expression="customers")
    assert out == (
        "Valid: the data matches the schema. "
        "Validated the result of `customers` (array of 3 items)."
    )


async def test_validating_an_expression_that_matches_nothing_says_so() -> None:
    out = await call(ValidateDataTool(), context(), schema={"type": "null"}, expression="nope")
    assert out == (
        "Valid: the data matches the schema. "
        "Validated the result of `nope` (null: the expression matched nothing)."
    )


async def test_validation_lists_a_hundred_errors_and_counts_the_rest() -> None:
    output = await ValidateDataTool().run(
        ValidateDataInput.model_validate({"schema": {"items": {"type": "string"}}}),
        context(list(range(150))),
    )
    lines = output.content.splitlines()
    assert lines[0].startswith("Invalid: 150 errors validating")
    assert lines[1] == "$[0]: 0 is not of type 'string'"
    assert lines[100] == "$[99]: 99 is not of type 'string'"
    assert lines[101:] == ["… and 50 more errors."]
    assert output.truncated


async def test_formats_are_checked() -> None:
    schema = {"properties": {"when": {"format": "date"}}}
    out = await call(ValidateDataTool(), context({"when": "2024-13-01"}), schema=schema)
    assert "$.when: '2024-13-01' is not a 'date'" in out


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "strng"}, "The schema is invalid at $.type: 'strng' is not valid"),
        ({"properties": {"a": {"minimum": "x"}}}, "at $.properties.a.minimum: 'x' is not of"),
        ({"pattern": "("}, "at $.pattern: '(' is not a 'regex'"),
        ({"$ref": "#/$defs/missing"}, "The schema has a $ref that cannot be resolved"),
    ],
)
async def test_an_invalid_schema_is_a_tool_error_naming_the_problem(
    schema: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ValidateDataTool(), context(), schema=schema)
    assert expected in str(caught.value)


def test_a_schema_sent_as_json_text_is_accepted() -> None:
    args = validate_input(ValidateDataTool(), {"schema": '{"type": "object"}'})
    assert isinstance(args, ValidateDataInput) and args.json_schema == {"type": "object"}


def test_json_paths_quote_keys_that_are_not_identifiers() -> None:
    assert json_path([]) == "$"
    assert json_path(["orders", 3, "odd key", "é", "_ok1"]) == '$.orders[3]["odd key"]["é"]._ok1'


class FakeUser:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.asked: list[tuple[str, list[str] | None]] = []

    async def __call__(self, question: str, choices: list[str] | None) -> str:
        self.asked.append((question, choices))
        if self.answer is None:
            raise UserQuestionCancelled("the turn was aborted")
        return self.answer


async def test_ask_user_returns_the_answer() -> None:
    user = FakeUser("Lyon")
    out = await call(AskUserTool(), context(ask_user=user), question="Which city?")
    assert out == "The user answered: Lyon"
    assert user.asked == [("Which city?", None)]


async def test_ask_user_accepts_a_choice_in_any_case() -> None:
    user = FakeUser(" eur ")
    out = await call(AskUserTool(), context(ask_user=user), question="Currency?", choices=["EUR"])
    assert out == "The user answered:  eur "
    assert user.asked == [("Currency?", ["EUR"])]


async def test_ask_user_passes_on_free_text_outside_the_choices() -> None:
    user = FakeUser("both, please")
    out = await call(AskUserTool(), context(ask_user=user), question="A or B?", choices=["A", "B"])
    assert out.splitlines() == [
        "The user answered: both, please",
        '(That is not one of the offered choices ("A", "B"); they typed it.)',
    ]


async def test_ask_user_treats_empty_choices_as_none() -> None:
    user = FakeUser("ok")
    await call(AskUserTool(), context(ask_user=user), question="Go on?", choices=[])
    assert user.asked == [("Go on?", None)]


async def test_a_cancelled_question_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match=r"^The question was cancelled \(the turn was aborted\)"):
        await call(AskUserTool(), context(ask_user=FakeUser(None)), question="Which city?")


async def test_a_client_that_cannot_ask_cancels_the_question() -> None:
    with pytest.raises(ToolError, match="cannot ask the user questions"):
        await call(AskUserTool(), context(), question="Which city?")


DATA_TOOLS = ["QueryData", "SummarizeData", "ValidateData", "AskUser"]


def test_registry_appends_the_data_tools_after_the_shell_and_web_tools_in_order() -> None:
    names = ToolRegistry(default_tools(todo=False)).names()
    assert names[names.index("WebFetch") + 1 :] == DATA_TOOLS


def test_data_tool_specs_are_valid_json_schemas_that_mention_the_caller_data() -> None:
    specs = {spec.name: spec for spec in ToolRegistry(default_tools()).specs()}
    for name in DATA_TOOLS:
        schema = specs[name].input_schema
        validator_for(schema).check_schema(schema)
        assert "anyOf" not in json.dumps(schema) and "title" not in schema, name
    for name in DATA_TOOLS[:3]:
        assert "<structuredData>" in specs[name].description
    assert specs["ValidateData"].input_schema["required"] == ["schema"]
    assert specs["AskUser"].input_schema["properties"]["choices"]["type"] == "array"


def test_data_tools_are_read_only_and_touch_no_files() -> None:
    registry = ToolRegistry(default_tools())
    kinds = {"QueryData": "search", "SummarizeData": "think", "ValidateData": "think"}
    for name in DATA_TOOLS:
        tool = registry.get(name)
        assert tool is not None
        args = tool.input_model.model_validate({"expression": "a", "schema": {}, "question": "q?"})
        assert tool.kind == kinds.get(name, "other")
        assert tool.is_read_only(args)
        assert tool.rule_content(args, Path.cwd()) is None
        assert tool.locations(args, Path.cwd()) == []


def test_titles_show_the_expression_or_question() -> None:
    query = QueryDataTool()
    assert query.title(QueryDataInput(expression="orders[0]")) == ("Query data: orders[0]")
    summary = SummarizeDataTool()
    assert summary.title(SummarizeDataInput()) == "Summarize data"
    ask = AskUserTool()
    long_question = "Which? " * 20 + "\nsecond line"
    title = ask.title(AskUserInput(question=long_question))
    assert title.startswith("Ask the user: Which?") and title.endswith("…") and "\n" not in title


@pytest.mark.parametrize(
    ("tool", "raw", "message"),
    [
        (ValidateDataTool(), {"expression": "orders"}, "ValidateData: schema: Field required"),
        (ValidateDataTool(), {"schema": "not json"}, "ValidateData: schema: Input should be"),
        (QueryDataTool(), {"expression": ""}, "QueryData: expression: String should have"),
        (AskUserTool(), {"question": "Q?", "choices": "A"}, "AskUser: choices: Input should be"),
        (AskUserTool(), {}, "AskUser: question: Field required"),
    ],
)
def test_validate_input_names_the_bad_field(tool: Tool, raw: dict[str, Any], message: str) -> None:
    result = validate_input(tool, raw)
    assert isinstance(result, str) and result.startswith(f"Invalid input for {message}")
