"""Seed 003's agent examples, with real ``LlmAgent`` nodes on scripted models.

The examples keep their shape; each docstring lists the adaptations. The seeds' model
``"gemini-flash-latest"`` is swapped for a scripted ``FunctionModel`` (no network).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from engine import Agent, Context, Event, InMemoryEventStore, LlmAgent, Runner, Workflow, node

from .scripts import Script, text


async def test_editorial_workflow(store: InMemoryEventStore, read_log: Any) -> None:
    """editorial_workflow: draft_agent is an LlmAgent; the function node formats its draft.

    Defined here: format_function_node, which the seed uses without defining.
    """
    script = Script(lambda messages, info: text(f"draft about {messages[-1].parts[-1].content}"))
    draft_agent = LlmAgent(name="draft_agent", model=script.model, instruction="Write a short draft.")

    @node
    def format_function_node(node_input: str) -> str:
        return node_input.title()

    @node(rerun_on_resume=True)
    async def editorial_workflow(ctx: Context, user_request: str):
        # Agent Node generates output
        raw_draft = await ctx.run_node(draft_agent, user_request)

        # Function Node formats text
        formatted_text = await ctx.run_node(format_function_node, raw_draft)

        return formatted_text

    runner = Runner(Workflow(name="wf", edges=[("START", editorial_workflow)]), store=store)
    result = await runner.run("otters")

    assert result.status == "completed", result.error
    assert result.output == "Draft About Otters"
    assert script.instructions == ["Write a short draft."]
    log = await read_log(runner, result.session_id)
    assert log.outputs()["wf@1/editorial_workflow@1/draft_agent@1"] == "draft about otters"
    step = log.outputs()["wf@1/editorial_workflow@1/draft_agent@1/model@1"]
    assert step["response"]["parts"][0]["content"] == "draft about otters"
    assert step["response"]["usage"]["output_tokens"] > 0  # token usage recorded per response


class CityTime(BaseModel):
    time_info: str  # time information
    city: str  # city name


@node
def city_time_function(city: str):
    """Simulate returning the current time in a specified city."""
    return CityTime(time_info="10:10 AM", city=city)


def report(messages: Any, info: Any) -> Any:
    data = json.loads(messages[-1].parts[-1].content)  # the agent's input, as JSON
    return text(f"It is {data['time_info']} in {data['city']}.")


async def test_city_report_agent_with_input_schema(store: InMemoryEventStore, read_log: Any) -> None:
    """city_workflow: city_report_agent is an Agent with input_schema=CityTime.

    Adaptation: city_workflow calls run_node, so it is declared with rerun_on_resume=True.
    """
    script = Script(report)
    city_report_agent = Agent(
        name="city_report_agent",
        model=script.model,
        input_schema=CityTime,
        instruction="""output the data provided by the previous node.""",
    )

    @node(rerun_on_resume=True)  # workflow node
    async def city_workflow(ctx: Context):
        city_time = await ctx.run_node(city_time_function, "Paris")
        report_text = await ctx.run_node(city_report_agent, city_time)

        return report_text

    runner = Runner(Workflow(name="wf", edges=[("START", city_workflow)]), store=store)
    result = await runner.run()

    assert result.output == "It is 10:10 AM in Paris."
    assert json.loads(script.last_parts(1)[-1].content) == {"time_info": "10:10 AM", "city": "Paris"}


async def test_city_report_agent_rejects_input_that_breaks_its_schema(store: InMemoryEventStore) -> None:
    """An input that does not match input_schema fails the agent node naming it; the model is not called."""
    script = Script(report)
    city_report_agent = Agent(name="city_report_agent", model=script.model, input_schema=CityTime)

    @node(rerun_on_resume=True)
    async def city_workflow(ctx: Context):
        return await ctx.run_node(city_report_agent, {"city": "Paris"})

    result = await Runner(Workflow(name="wf", edges=[("START", city_workflow)]), store=store).run()
    assert result.status == "failed"
    assert "city_report_agent" in (result.error or "") and "time_info" in (result.error or "")
    assert script.calls == 0


def code_loop(coder: LlmAgent, fixer: LlmAgent, lint: Any) -> Workflow:
    @node(name="lint_reviewer")
    async def compile_lint_check(ctx: Context, code: str):
        # Simulate API call or lint check
        return lint(code)

    @node  # workflow node
    async def code_workflow(ctx: Context, user_request: str):
        code = await ctx.run_node(coder, user_request)
        check_resp = await ctx.run_node(compile_lint_check, code)

        while check_resp.findings:
            yield Event(state={"code": code, "findings": check_resp.findings})
            code = await ctx.run_node(fixer, {"code": code, "findings": check_resp.findings})

            check_resp = await ctx.run_node(compile_lint_check, code)

        yield code

    return Workflow(name="wf", edges=[("START", node(code_workflow, rerun_on_resume=True))])


class Response(BaseModel):
    findings: str = ""


def fix(messages: Any, info: Any) -> Any:
    """The scripted fixer reads the code and findings from its filled-in instruction."""
    found = re.search(
        r"Refactor current code (.*)\.\n\s*Based on compile & lint review: (.*)", info.instructions, re.S
    )
    assert found, info.instructions
    code, findings = found.group(1), found.group(2)
    if "unused import os" in findings:
        return text(code.replace("import os\n", "", 1))
    return text(code + "\n# fixed")


async def test_code_lint_fix_loop(store: InMemoryEventStore, read_log: Any) -> None:
    """code_workflow: coder_agent and fixer_agent are LlmAgents; fixer's instruction reads {code} and {findings}.

    Adaptation: compile_lint_check returns a pydantic model instead of a local class.
    Adaptation: code_workflow yields its final value (an async generator cannot return one).
    Adaptation: code_workflow gets rerun_on_resume=True like every run_node caller.
    """
    coder_script = Script(text("# say hi\nimport os\nprint('hi')"))
    fixer_script = Script(fix, fix)
    coder_agent = LlmAgent(
        name="generator_agent",
        model=coder_script.model,
        instruction="Write python code for user request.",
        output_schema=str,
    )
    fixer_agent = LlmAgent(
        name="fixer_agent",
        model=fixer_script.model,
        instruction="""Refactor current code {code}.
            Based on compile & lint review: {findings}""",
        output_schema=str,
    )

    def lint(code: str) -> Response:
        if "import os" in code:
            return Response(findings="unused import os")
        return Response(findings="" if "# fixed" in code else "no trailing comment")

    runner = Runner(code_loop(coder_agent, fixer_agent, lint), store=store)
    result = await runner.run("say hi")

    assert result.status == "completed", result.error
    assert result.output == "# say hi\nprint('hi')\n# fixed"
    assert (coder_script.calls, fixer_script.calls) == (1, 2)
    log = await read_log(runner, result.session_id)
    agents = [p for p in log.started() if p.count("/") == 2 and "agent" in p]
    assert agents == [
        "wf@1/code_workflow@1/generator_agent@1",
        "wf@1/code_workflow@1/fixer_agent@1",
        "wf@1/code_workflow@1/fixer_agent@2",
    ]
    assert "Based on compile & lint review: no trailing comment" in (fixer_script.instructions[1] or "")
