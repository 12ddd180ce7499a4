"""JSON Schema patterns run in linear time (RE2): an answer crafted against a backtracking pattern
is refused at once, and a pattern RE2 cannot run fails the asking node, naming it."""

from __future__ import annotations

import time
from typing import Any

import pytest

from engine import START, RequestInput, Runner, Workflow
from engine.errors import InvalidAnswerError

NESTED = "^(a+)+$"  # exponential on "aaa...ab" for a backtracking engine


def _asking(schema: dict[str, Any]) -> Workflow:
    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="code", response_schema=schema)

    return Workflow(name="wf", edges=[(START, ask)])


async def test_an_answer_against_a_nested_quantifier_is_refused_in_linear_time() -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": NESTED}}}
    runner = Runner(_asking(schema))
    session_id = (await runner.run(None)).session_id
    began = time.monotonic()
    with pytest.raises(InvalidAnswerError) as refused:
        await runner.resume(session_id, {"code": {"code": "a" * 40 + "b"}})  # re: about 2**40 steps
    assert time.monotonic() - began < 5
    assert "does not match '^(a+)+$'" in str(refused.value.field_errors["code"])
    result = await runner.resume(session_id, {"code": {"code": "aaaa"}})
    assert result.status == "completed"


async def test_names_against_pattern_properties_are_matched_in_linear_time() -> None:
    schema = {
        "type": "object",
        "patternProperties": {NESTED: {"type": "integer"}},
        "additionalProperties": False,
    }
    runner = Runner(_asking(schema))
    session_id = (await runner.run(None)).session_id
    with pytest.raises(InvalidAnswerError) as refused:
        await runner.resume(session_id, {"code": {"a" * 40 + "b": 1}})
    assert "Additional properties are not allowed" in str(refused.value.field_errors)


async def test_a_pattern_re2_cannot_run_fails_the_node_saying_why() -> None:
    result = await Runner(_asking({"type": "string", "pattern": r"^(a)\1$"})).run(None)
    assert result.status == "failed"
    assert f"the pattern {r'^(a)\1$'!r} cannot run in linear time (invalid escape sequence" in str(
        result.error
    )
