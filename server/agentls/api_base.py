"""The base classes of every wire model (agentls.api and the modules it gathers): camelCase
on the wire, unknown keys ignored, and strict JSON types for what clients send."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from agentls.json_text import is_unicode


class WireModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class ParamsModel(WireModel):
    """What a client sends: JSON types are checked strictly (`true` is no integer, `5` no
    string); a float field still takes an integer. JSON can escape a lone surrogate, which
    is no Unicode (no file name, no UTF-8 can hold it): refused in every string."""

    model_config = ConfigDict(strict=True)

    @model_validator(mode="before")
    @classmethod
    def _only_unicode(cls, data: Any) -> Any:
        if not is_unicode(data):
            raise ValueError("a string holds a lone surrogate (\\ud800-\\udfff), not Unicode")
        return data


class WirePosition(ParamsModel):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class WireRange(ParamsModel):
    """An LSP range; its columns are in the connection's negotiated position encoding."""

    start: WirePosition
    end: WirePosition
