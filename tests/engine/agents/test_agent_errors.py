"""Bad definitions and bad model behaviour: clear errors, and the node's retry policy applies."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from engine import START, Context, Event, InMemoryEventStore, LlmAgent, RetryConfig, Runner, Workflow, node
from engine.agents import AgentConfigurationError
from engine.errors import GraphValidationError

from .scripts import Script, call, part_texts, text


def test_rule_9_a_chat_agent_may_only_follow_start() -> None:
    chat = LlmAgent(name="concierge", model=Script().model, mode="chat")

    def greet(node_input: str) -> str:
        return node_input

    with pytest.raises(GraphValidationError) as broken:
        Workflow(name="wf", edges=[(START, greet, chat)])

    assert broken.value.rule == 9
    assert "concierge" in str(broken.value) and "mode='chat'" in str(broken.value)
    Workflow(name="ok", edges=[(START, chat)])  # right after START is fine


async def test_a_missing_template_key_names_the_key(store: InMemoryEventStore) -> None:
    script = Script(text("never"))
    agent = LlmAgent(name="writer", model=script.model, instruction="Write about {topic} for {audience}.")
    result = await Runner(Workflow(name="wf", edges=[(START, agent)]), store=store).run({"topic": "otters"})

    assert result.status == "failed"
    assert "{audience}" in (result.error or "") and "writer" in (result.error or "")
    assert result.error_type == "TemplateKeyError"
    assert script.calls == 0


async def test_template_keys_come_from_state_and_input_and_may_be_optional(store: InMemoryEventStore) -> None:
    script = Script(text("ok"))
    agent = LlmAgent(
        name="writer", model=script.model, instruction='{topic} for {audience}{note?}; {"json": 1}'
    )

    @node(rerun_on_resume=True)
    async def flow(ctx: Context, node_input: Any):
        yield Event(state={"audience": "kids"})  # committed, so the agent sees it
        yield await ctx.run_node(agent, {"topic": "otters"})

    result = await Runner(Workflow(name="wf", edges=[(START, flow)]), store=store).run()
    assert result.output == "ok", result.error
    assert script.instructions == ['otters for kids; {"json": 1}']


class Verdict(BaseModel):
    score: int
    reason: str


async def test_structured_output_is_validated_into_the_schema(store: InMemoryEventStore) -> None:
    script = Script(lambda m, info: call(info.output_tools[0].name, {"score": 4, "reason": "clear"}))
    agent = LlmAgent(name="judge", model=script.model, output_schema=Verdict, output_key="verdict")

    @node(rerun_on_resume=True)
    async def flow(ctx: Context) -> dict[str, Any]:
        verdict = await ctx.run_node(agent, "rate this")
        assert isinstance(verdict, Verdict)
        return {"verdict": verdict.model_dump(), "state": ctx.state["verdict"]}

    result = await Runner(Workflow(name="wf", edges=[(START, flow)]), store=store).run()
    assert result.output["verdict"] == {"score": 4, "reason": "clear"}


async def test_an_answer_that_fails_output_schema_fails_the_node_saying_what_was_invalid(
    store: InMemoryEventStore, read_log: Any
) -> None:
    bad = lambda m, info: call(info.output_tools[0].name, {"score": "high"})  # noqa: E731
    script = Script(bad, bad)
    agent = LlmAgent(name="judge", model=script.model, output_schema=Verdict)
    runner = Runner(Workflow(name="wf", edges=[(START, agent)]), store=store)
    result = await runner.run("rate this")

    assert result.status == "failed"
    assert result.error_type == "AgentOutputError"
    assert "judge" in (result.error or "")
    assert "what was invalid" in (result.error or "") and "score" in (result.error or "")
    assert "valid integer" in (result.error or "")
    told = " ".join(part_texts(script.last_parts(2)))
    assert "score" in told and "reason" in told  # pydantic-ai told the model what was invalid
    assert script.calls == 2  # retries=1: one correction, then the node fails


async def test_the_node_retry_policy_asks_the_model_again(store: InMemoryEventStore, read_log: Any) -> None:
    bad = lambda m, info: call(info.output_tools[0].name, {"score": "high"})  # noqa: E731
    good = lambda m, info: call(info.output_tools[0].name, {"score": 2, "reason": "ok"})  # noqa: E731
    script = Script(bad, bad, good)
    agent = LlmAgent(
        name="judge",
        model=script.model,
        output_schema=Verdict,
        retry_config=RetryConfig(max_attempts=2, initial_delay=0, jitter=0),
    )
    runner = Runner(Workflow(name="wf", edges=[(START, agent)]), store=store)
    result = await runner.run("rate this")

    assert result.status == "completed", result.error
    assert result.output == Verdict(score=2, reason="ok")
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["wf@1/judge@1"]
    assert "wf@1/judge@1/model@1r2" in log.ran()  # the second attempt's own model step


async def test_invalid_tool_arguments_are_sent_back_to_the_model(store: InMemoryEventStore) -> None:
    def double(n: int) -> int:
        """Double a number."""
        return 2 * n

    script = Script(call("double", {"n": "many"}), call("double", {"n": 4}), text("eight"))
    agent = LlmAgent(name="calc", model=script.model, tools=[double])
    result = await Runner(Workflow(name="wf", edges=[(START, agent)]), store=store).run("double 4")

    assert result.output == "eight"
    assert "valid integer" in " ".join(part_texts(script.last_parts(2)))
    assert part_texts(script.last_parts(3)) == ["8"]


async def test_tool_arguments_that_stay_invalid_fail_the_node_saying_why(store: InMemoryEventStore) -> None:
    def double(n: int) -> int:
        """Double a number."""
        return 2 * n

    script = Script(call("double", {"n": "many"}), call("double", {"n": "lots"}))
    agent = LlmAgent(name="calc", model=script.model, tools=[double])
    result = await Runner(Workflow(name="wf", edges=[(START, agent)]), store=store).run("double it")

    assert result.status == "failed" and result.error_type == "AgentOutputError"
    assert "double" in (result.error or "") and "valid integer" in (result.error or "")


async def test_a_tool_that_raises_fails_the_run_at_the_tool(store: InMemoryEventStore, read_log: Any) -> None:
    attempts: list[int] = []

    def flaky(order_id: str) -> str:
        """Fetch something that breaks the first time."""
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("inventory service is down")
        return "in stock"

    script = Script(call("flaky", {"order_id": "A1"}), text("it is in stock"))
    runner = Runner(
        Workflow(name="wf", edges=[(START, LlmAgent(name="clerk", model=script.model, tools=[flaky]))]),
        store=store,
    )
    failed = await runner.run("is A1 in stock?")

    assert failed.status == "failed"
    assert failed.error_type == "ConnectionError" and "inventory service is down" in (failed.error or "")
    log = await read_log(runner, failed.session_id)
    assert log.errors()[0].node_path == "wf@1/clerk@1/flaky@1.1"

    retried = await runner.resume(failed.session_id, {})  # retry the failed run
    assert retried.output == "it is in stock"
    assert script.calls == 2  # the recorded first model step was replayed, not requested again


def test_a_provider_that_is_not_installed_names_the_extra_to_install() -> None:
    with pytest.raises(AgentConfigurationError) as missing:
        LlmAgent(name="seed_agent", model="gemini-flash-latest")
    assert "seed_agent" in str(missing.value)
    assert "pydantic-ai-slim[google]" in str(missing.value)


def test_a_model_string_without_provider_is_refused() -> None:
    with pytest.raises(AgentConfigurationError, match="names no provider"):
        LlmAgent(name="a", model="some-model")


def test_sub_agents_inherit_the_model_and_agents_need_one() -> None:
    script = Script()
    child = LlmAgent(name="child")
    LlmAgent(name="parent", model=script.model, sub_agents=[child])
    assert child.model_name == "function:scripted"


async def test_an_agent_without_a_model_fails_its_run_clearly(store: InMemoryEventStore) -> None:
    result = await Runner(Workflow(name="wf", edges=[(START, LlmAgent(name="lonely"))]), store=store).run(
        "hi"
    )
    assert result.status == "failed"
    assert "lonely" in (result.error or "") and "has no model" in (result.error or "")


async def test_no_api_key_fails_the_run_naming_the_variable(
    store: InMemoryEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = LlmAgent(name="real", model="openai:gpt-5-mini")  # defining it needs no key
    result = await Runner(Workflow(name="wf", edges=[(START, agent)]), store=store).run("hi")

    assert result.status == "failed"
    assert result.error_type == "ModelSetupError"
    assert "OPENAI_API_KEY" in (result.error or "") and "real" in (result.error or "")


async def test_a_tool_asking_the_model_to_retry_is_recorded_and_replayed(
    store: InMemoryEventStore, read_log: Any
) -> None:
    from pydantic_ai import ModelRetry

    from engine import tool

    looked: list[str] = []

    def find(order_id: str) -> str:
        """Find an order."""
        looked.append(order_id)
        if not order_id.startswith("B"):
            raise ModelRetry(f"there is no order {order_id}; ids start with B")
        return f"{order_id}: shipped"

    @tool(requires_approval=True)
    def notify(text: str) -> str:
        """Tell the customer."""
        return "told"

    script = Script(
        call("find", {"order_id": "A1"}),
        call("find", {"order_id": "B1"}),
        call("notify", {"text": "shipped"}),
        text("Done."),
    )
    agent = LlmAgent(name="clerk", model=script.model, tools=[find, notify])
    runner = Runner(Workflow(name="wf", edges=[(START, agent)]), store=store)
    waiting = await runner.run("where is A1?")

    assert "ids start with B" in " ".join(part_texts(script.last_parts(2)))  # the model was told
    log = await read_log(runner, waiting.session_id)
    assert log.outputs()["wf@1/clerk@1/find@1.1"]["retry"] == "there is no order A1; ids start with B"
    done = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: {"approved": True}})
    assert done.output == "Done."
    assert looked == ["A1", "B1"]  # replayed: the recorded retry and result, not new calls
    assert script.calls == 4
