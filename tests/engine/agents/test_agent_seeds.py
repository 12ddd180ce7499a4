"""Seed 003's agent examples (``tests/engine/seed_003_flows.py``) with real ``LlmAgent`` nodes.

The workflows are the ones ``test_seed_003.py`` runs with function nodes in the agents' place;
here the agents are ``LlmAgent``s whose model, the seeds' ``"gemini-flash-latest"``, is swapped
for a scripted ``FunctionModel`` (no network).
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine import Agent, Context, InMemoryEventStore, LlmAgent, Runner, Workflow, node
from tests.engine import seed_003_flows
from tests.engine.seed_003_flows import CityTime

from .scripts import Script, text


async def test_editorial_workflow(store: InMemoryEventStore, read_log: Any) -> None:
    """editorial_workflow (``seed_003_flows.editorial``): draft_agent is an LlmAgent."""
    script = Script(lambda messages, info: text(f"draft about {messages[-1].parts[-1].content}"))
    draft_agent = LlmAgent(name="draft_agent", model=script.model, instruction="Write a short draft.")

    runner = Runner(seed_003_flows.editorial(draft_agent), store=store)
    result = await runner.run("otters")

    assert result.status == "completed", result.error
    assert result.output == "Draft About Otters"
    assert script.instructions == ["Write a short draft."]
    log = await read_log(runner, result.session_id)
    assert log.outputs()["wf@1/editorial_workflow@1/draft_agent@1"] == "draft about otters"
    step = log.outputs()["wf@1/editorial_workflow@1/draft_agent@1/model@1"]
    assert step["response"]["parts"][0]["content"] == "draft about otters"
    assert step["response"]["usage"]["output_tokens"] > 0  # token usage recorded per response


def report(messages: Any, info: Any) -> Any:
    data = json.loads(messages[-1].parts[-1].content)  # the agent's input, as JSON
    return text(f"It is {data['time_info']} in {data['city']}.")


async def test_city_report_agent_with_input_schema(store: InMemoryEventStore, read_log: Any) -> None:
    """city_workflow (``seed_003_flows.city_report``): city_report_agent is an Agent with input_schema=CityTime."""
    script = Script(report)
    city_report_agent = Agent(
        name="city_report_agent",
        model=script.model,
        input_schema=CityTime,
        instruction="""output the data provided by the previous node.""",
    )

    runner = Runner(seed_003_flows.city_report(city_report_agent), store=store)
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
    """code_workflow (``seed_003_flows.code_loop``): coder and fixer are LlmAgents; fixer's instruction reads {code} and {findings}."""
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

    runner = Runner(
        seed_003_flows.code_loop(coder_agent, fixer_agent, seed_003_flows.two_findings), store=store
    )
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
