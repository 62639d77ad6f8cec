"""agentls.json_compact writes the bytes `json.dumps` writes with compact separators."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentls.json_compact import dump_bytes, dumps

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_compact_json_is_what_json_dumps_writes(value: Any) -> None:
    expected = json.dumps(value, separators=(",", ":"))
    assert dumps(value) == expected
    assert dump_bytes(value) == expected.encode("ascii")


def test_lone_surrogates_and_non_ascii_are_escaped() -> None:
    assert dump_bytes({"text": "é\ud800"}) == b'{"text":"\\u00e9\\ud800"}'


def test_a_value_that_is_not_json_is_refused() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"path": object()})
