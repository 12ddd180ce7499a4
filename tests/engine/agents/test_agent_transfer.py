"""Agent transfer (seed 000): ``transfer_to_agent`` hands the conversation to a sub-agent."""

from __future__ import annotations

from typing import Any

from engine import START, InMemoryEventStore, LlmAgent, Runner, Workflow

from .scripts import Script, call, text


def transfer(to: str) -> Any:
    return call("transfer_to_agent", {"agent_name": to})


def desk(triage: Script, billing: Script, tech: Script) -> Workflow:
    agent = LlmAgent(
        name="triage",
        model=triage.model,
        instruction="Route the customer to the right desk.",
        sub_agents=[
            LlmAgent(
                name="billing",
                model=billing.model,
                description="Invoices and refunds.",
                instruction="You handle billing.",
            ),
            LlmAgent(
                name="tech", model=tech.model, description="Broken things.", instruction="You fix things."
            ),
        ],
    )
    return Workflow(name="wf", edges=[(START, agent)])


async def test_transfer_hands_the_conversation_and_the_output_to_the_sub_agent(
    store: InMemoryEventStore, read_log: Any
) -> None:
    triage, billing, tech = Script(transfer("billing")), Script(text("Your invoice is fixed.")), Script()
    runner = Runner(desk(triage, billing, tech), store=store)
    result = await runner.run("my invoice is wrong")

    assert result.status == "completed", result.error
    assert result.output == "Your invoice is fixed."
    assert (triage.calls, billing.calls, tech.calls) == (1, 1, 0)
    # The sub-agent sees the whole conversation, under its own instruction.
    seen = billing.requests[0]
    assert seen[0].parts[0].content == "my invoice is wrong"
    assert billing.instructions == ["You handle billing."]
    log = await read_log(runner, result.session_id)
    assert "wf@1/triage@1/billing@1/model@1" in log.started()
    assert log.outputs()["wf@1/triage@1/billing@1"] == "Your invoice is fixed."


async def test_the_transfer_tool_offers_only_the_sub_agents(store: InMemoryEventStore) -> None:
    offered: list[Any] = []

    def look(messages: Any, info: Any) -> Any:
        offered.extend(t for t in info.output_tools if t.name == "transfer_to_agent")
        return transfer("tech")

    triage, tech = Script(look), Script(text("Restarted it."))
    result = await Runner(desk(triage, Script(), tech), store=store).run("it broke")

    assert result.output == "Restarted it."
    [tool] = offered
    assert tool.parameters_json_schema["properties"]["agent_name"]["enum"] == ["billing", "tech"]
    assert "Invoices and refunds." in (tool.description or "")


async def test_a_transfer_to_an_unknown_agent_is_sent_back_to_the_model(store: InMemoryEventStore) -> None:
    triage, billing = Script(transfer("sales"), transfer("billing")), Script(text("Billing here."))
    result = await Runner(desk(triage, billing, Script()), store=store).run("hello")

    assert result.output == "Billing here."
    assert triage.calls == 2


async def test_a_resumed_transfer_replays_without_calling_any_model(store: InMemoryEventStore) -> None:
    from engine import tool

    @tool(requires_approval=True)
    def refund(amount: float) -> str:
        """Refund."""
        return f"refunded {amount}"

    triage = Script(transfer("billing"))
    billing = Script(call("refund", {"amount": 5.0}), text("Refunded 5."))
    agent = LlmAgent(
        name="triage",
        model=triage.model,
        sub_agents=[LlmAgent(name="billing", model=billing.model, tools=[refund])],
    )
    runner = Runner(Workflow(name="wf", edges=[(START, agent)]), store=store)
    waiting = await runner.run("refund me")
    assert waiting.interrupts[0].node_path == "wf@1/triage@1/billing@1/approval@1"

    done = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: {"approved": True}})
    assert done.output == "Refunded 5."
    assert (triage.calls, billing.calls) == (1, 2)
