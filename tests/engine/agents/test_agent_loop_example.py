"""The docs' dynamic loop example (seed 003, "Loop route") with its plain result class (issue 26.5).

The log keeps JSON: a plain class instance is refused, naming the node, the type and the fix;
with ``@dataclass`` on that class (and the adaptations Python and the engine need: an async
generator yields its last value, a ``run_node`` caller has ``rerun_on_resume=True``) it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import START, Context, Event, InMemoryEventStore, LlmAgent, Runner, Workflow, node

from .scripts import Script, text


def loop(coder: Script, fixer: Script, as_dataclass: bool) -> Workflow:
    coder_agent = LlmAgent(
        name="generator_agent",
        model=coder.model,
        instruction="Write python code for user request.",
        output_schema=str,
    )

    @node(name="lint_reviewer")
    async def compile_lint_check(ctx: Context, code: str):  # type: ignore[no-untyped-def]
        # Simulate API call or lint check
        class Response:
            findings = "unused import os" if "import os" in code else ""

        if as_dataclass:  # the one change: @dataclass, its attribute annotated
            found = Response.findings

            @dataclass
            class Response:  # type: ignore[no-redef]
                findings: str = found

        return Response()

    fixer_agent = LlmAgent(
        name="fixer_agent",
        model=fixer.model,
        instruction="""Refactor current code {code}.
            Based on compile & lint review: {findings}""",
        output_schema=str,
    )

    @node(rerun_on_resume=True)  # workflow node
    async def code_workflow(ctx: Context, user_request: str):  # type: ignore[no-untyped-def]
        code = await ctx.run_node(coder_agent, user_request)
        check_resp = await ctx.run_node(compile_lint_check, code)

        while check_resp.findings:
            yield Event(state={"code": code, "findings": check_resp.findings})
            code = await ctx.run_node(fixer_agent, {"code": code, "findings": check_resp.findings})

            check_resp = await ctx.run_node(compile_lint_check, code)

        yield code

    return Workflow(name="wf", edges=[(START, code_workflow)])


async def test_a_plain_class_is_refused_naming_the_node_the_type_and_the_fix() -> None:
    runner = Runner(loop(Script(text("import os\nprint(1)")), Script(), False), store=InMemoryEventStore())
    failed = await runner.run("print one")
    assert failed.status == "failed"
    message = str(failed.error)
    assert "wf@1/code_workflow@1/lint_reviewer@1" in message
    assert "Response" in message
    assert "a dataclass or a pydantic model with the same attributes" in message


async def test_with_a_dataclass_the_loop_runs_as_documented() -> None:
    coder, fixer = Script(text("import os\nprint(1)")), Script(text("print(1)"))
    runner = Runner(loop(coder, fixer, True), store=InMemoryEventStore())
    done = await runner.run("print one")
    assert done.status == "completed", done.error
    assert done.output == "print(1)"
    assert "Based on compile & lint review: unused import os" in (fixer.instructions[0] or "")
    assert "Refactor current code import os" in (fixer.instructions[0] or "")
