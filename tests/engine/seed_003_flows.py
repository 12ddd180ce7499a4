"""Seed 003's data-handling and loop examples, kept as written, with their agents passed in.

``tests/engine/test_seed_003.py`` runs them with function nodes standing in for the LLM agents,
``tests/engine/agents/test_agent_seeds.py`` with real ``LlmAgent`` nodes on scripted models.
Adaptations (those issue 3 allows) are listed per builder; the tests list theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from engine import BaseNode, Context, Event, Workflow, node


def editorial(draft_agent: BaseNode) -> Workflow:
    """editorial_workflow. Defined here: format_function_node, which the seed uses without defining."""

    @node
    def format_function_node(node_input: str) -> str:
        return node_input.title()

    @node(rerun_on_resume=True)
    async def editorial_workflow(ctx: Context, user_request: str):  # type: ignore[no-untyped-def]
        # Agent Node generates output
        raw_draft = await ctx.run_node(draft_agent, user_request)

        # Function Node formats text
        formatted_text = await ctx.run_node(format_function_node, raw_draft)

        return formatted_text

    return Workflow(name="wf", edges=[("START", editorial_workflow)])


class CityTime(BaseModel):
    time_info: str  # time information
    city: str  # city name


@node
def city_time_function(city: str):  # type: ignore[no-untyped-def]
    """Simulate returning the current time in a specified city."""
    return CityTime(time_info="10:10 AM", city=city)


def city_report(city_report_agent: BaseNode) -> Workflow:
    """city_workflow with the CityTime schema.

    Adaptation: city_workflow calls run_node, so it is declared with rerun_on_resume=True.
    """

    @node(rerun_on_resume=True)  # workflow node
    async def city_workflow(ctx: Context):  # type: ignore[no-untyped-def]
        city_time = await ctx.run_node(city_time_function, "Paris")
        report_text = await ctx.run_node(city_report_agent, city_time)

        return report_text

    return Workflow(name="wf", edges=[("START", city_workflow)])


class Response(BaseModel):
    findings: str = ""


def code_loop(coder_agent: BaseNode, fixer_agent: BaseNode, findings_for: Callable[[str], str]) -> Workflow:
    """code_workflow: code, lint, fix until the lint check is clean.

    Adaptation: compile_lint_check returns a pydantic model instead of a local class.
    Adaptation: code_workflow yields its final value instead of returning it (an async generator cannot return a value).
    Adaptation: code_workflow is declared with rerun_on_resume=True like every run_node caller.
    """

    @node(name="lint_reviewer")
    async def compile_lint_check(ctx: Context, code: str) -> Any:
        # Simulate API call or lint check
        return Response(findings=findings_for(code))

    @node(rerun_on_resume=True)  # workflow node
    async def code_workflow(ctx: Context, user_request: str):  # type: ignore[no-untyped-def]
        code = await ctx.run_node(coder_agent, user_request)
        check_resp = await ctx.run_node(compile_lint_check, code)

        while check_resp.findings:
            yield Event(state={"code": code, "findings": check_resp.findings})
            code = await ctx.run_node(fixer_agent, {"code": code, "findings": check_resp.findings})

            check_resp = await ctx.run_node(compile_lint_check, code)

        yield code

    return Workflow(name="wf", edges=[("START", code_workflow)])


def two_findings(code: str) -> str:
    """A simulated lint check that finds two problems, one per round."""
    if "import os" in code:
        return "unused import os"
    return "" if "# fixed" in code else "no trailing comment"
