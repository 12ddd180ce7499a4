"""Agent transfer (seed 000, ADK's rules): to sub-agents, back to the parent, on to peers; replayed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine import START, InMemoryEventStore, LlmAgent, Runner, Workflow
from engine.agents import AgentConfigurationError

from .scripts import Script, call, text


def transfer(to: str) -> Any:
    return call("transfer_to_agent", {"agent_name": to})


def desk(
    triage: Script, billing: Script, tech: Script, instruction: str = "Route the customer to the right desk."
) -> Workflow:
    agent = LlmAgent(
        name="triage",
        model=triage.model,
        instruction=instruction,
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
    assert "wf@1/triage@1/billing@1/model@1" in log.ran()
    assert log.outputs()["wf@1/triage@1/billing@1"] == {
        "handoff_result": {"answer": "Your invoice is fixed."}
    }


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


def offered(into: list[Any]) -> Any:
    """A turn that notes the transfer targets offered, then answers."""

    def look(messages: Any, info: Any) -> Any:
        tools = [t for t in info.output_tools if t.name == "transfer_to_agent"]
        names = tools[0].parameters_json_schema["properties"]["agent_name"] if tools else None
        into.append(None if names is None else names.get("enum", [names.get("const")]))
        return text("noted")

    return look


async def test_a_sub_agent_hands_the_conversation_back_to_its_parent(
    store: InMemoryEventStore, read_log: Any
) -> None:
    triage = Script(transfer("billing"), text("Back at the desk: anything else?"))
    billing = Script(transfer("triage"))
    runner = Runner(desk(triage, billing, Script(), "Route {customer} to the right desk."), store=store)
    result = await runner.run({"customer": "Ann", "text": "actually it is not about money"})

    assert result.status == "completed", result.error
    assert result.output == "Back at the desk: anything else?"
    assert (triage.calls, billing.calls) == (2, 1)
    assert triage.instructions == ["Route Ann to the right desk."] * 2  # still read from the input
    # The parent carries on its own conversation, with what the sub-agent said in it.
    assert [m.kind for m in triage.requests[1]] == ["request", "response", "request", "response", "request"]
    log = await read_log(runner, result.session_id)
    assert log.ran() == [
        "wf@1",
        "wf@1/triage@1",
        "wf@1/triage@1/model@1",
        "wf@1/triage@1/billing@1",
        "wf@1/triage@1/billing@1/model@1",
        "wf@1/triage@1/model@2",
    ]
    assert (
        log.outputs()["wf@1/triage@1/billing@1"]["handoff_result"]["transfer"]["transfer_to_agent"]
        == "triage"
    )


async def test_a_sub_agent_hands_the_conversation_on_to_a_peer(
    store: InMemoryEventStore, read_log: Any
) -> None:
    seen: list[Any] = []

    def to_tech(messages: Any, info: Any) -> Any:
        offered(seen)(messages, info)
        return transfer("tech")

    triage, billing, tech = Script(transfer("billing")), Script(to_tech), Script(text("Rebooted."))
    runner = Runner(desk(triage, billing, tech), store=store)
    result = await runner.run("my bill and my router")

    assert result.output == "Rebooted."
    assert seen == [["triage", "tech"]]  # ADK's order: sub-agents, the parent, then the peers
    assert (triage.calls, billing.calls, tech.calls) == (1, 1, 1)
    assert "wf@1/triage@1/tech@1/model@1" in (await read_log(runner, result.session_id)).ran()


async def test_transfers_to_the_parent_or_peers_can_be_disallowed(store: InMemoryEventStore) -> None:
    seen: list[Any] = []
    for options in (
        {"disallow_transfer_to_parent": True},
        {"disallow_transfer_to_peers": True},
        {
            "disallow_transfer_to_parent": True,
            "disallow_transfer_to_peers": True,
        },
    ):
        billing = LlmAgent(name="billing", model=Script(offered(seen)).model, **options)
        tech = LlmAgent(name="tech", model=Script().model)
        root = LlmAgent(name="triage", model=Script(transfer("billing")).model, sub_agents=[billing, tech])
        result = await Runner(Workflow(name="wf", edges=[(START, root)]), store=store).run("hi")
        assert result.output == "noted", result.error

    assert seen == [["tech"], ["triage"], None]


async def test_the_agent_in_the_workflow_offers_only_its_own_sub_agents(store: InMemoryEventStore) -> None:
    seen: list[Any] = []
    billing = LlmAgent(name="billing", model=Script(offered(seen)).model)
    LlmAgent(name="triage", model=Script().model, sub_agents=[billing, LlmAgent(name="tech")])

    result = await Runner(Workflow(name="wf", edges=[(START, billing)]), store=store).run("hi")

    assert result.output == "noted"
    assert seen == [None]  # its parent and peers are not part of this execution


async def test_a_log_of_transfers_replays_without_asking_any_model_again() -> None:
    from engine import tool

    @tool(requires_approval=True)
    def reset_router(customer: str) -> str:
        """Reset a customer's router."""
        return f"reset for {customer}"

    def flow(triage: Script, billing: Script, tech: Script) -> Workflow:
        return Workflow(
            name="wf",
            edges=[
                (
                    START,
                    LlmAgent(
                        name="triage",
                        model=triage.model,
                        sub_agents=[
                            LlmAgent(name="billing", model=billing.model),
                            LlmAgent(name="tech", model=tech.model, tools=[reset_router]),
                        ],
                    ),
                )
            ],
        )

    store = InMemoryEventStore()
    first = (
        Script(transfer("billing"), transfer("tech")),
        Script(transfer("triage")),
        Script(call("reset_router", {"customer": "Ann"})),
    )
    waiting = await Runner(flow(*first), store=store).run("bill, then router")
    [question] = waiting.interrupts
    assert question.node_path == "wf@1/triage@1/tech@1/approval@1"
    saved = json.loads(json.dumps(store.dump(waiting.session_id)))

    later = (Script(), Script(), Script(text("Router reset.")))  # a fresh process: only tech's last step
    runner = Runner(flow(*later), store=InMemoryEventStore.load(saved))
    done = await runner.resume(waiting.session_id, {question.id: {"approved": True}})

    assert done.status == "completed", done.error
    assert done.output == "Router reset."
    assert [s.calls for s in first] == [2, 1, 1]
    assert [s.calls for s in later] == [0, 0, 1]


async def test_agents_that_only_ever_transfer_fail_the_node(store: InMemoryEventStore) -> None:
    triage = Script(*[transfer("billing")] * 30)
    billing = Script(*[transfer("triage")] * 30)
    result = await Runner(desk(triage, billing, Script()), store=store).run("ping")

    assert result.status == "failed" and result.error_type == "AgentOutputError"
    assert "transferred 25 times" in (result.error or "")


def test_an_agent_has_one_parent_and_names_are_unique_in_a_tree() -> None:
    shared = LlmAgent(name="shared")
    LlmAgent(name="first", sub_agents=[shared])
    with pytest.raises(AgentConfigurationError, match="already a sub-agent of 'first'"):
        LlmAgent(name="second", sub_agents=[shared])

    with pytest.raises(AgentConfigurationError, match=r"\['leaf'\] appear more than once"):
        LlmAgent(
            name="top",
            sub_agents=[
                LlmAgent(name="a", sub_agents=[LlmAgent(name="leaf")]),
                LlmAgent(name="b", sub_agents=[LlmAgent(name="leaf")]),
            ],
        )


async def test_a_recorded_transfer_to_an_agent_no_longer_there_fails_clearly() -> None:
    from engine import tool

    @tool(requires_approval=True)
    def reset(customer: str) -> str:
        """Reset the router."""
        return "reset"

    def flow(peer: str) -> Workflow:
        subs = [
            LlmAgent(name="billing", model=Script(transfer("tech")).model),
            LlmAgent(name=peer, model=Script(call("reset", {"customer": "Ann"})).model, tools=[reset]),
        ]
        root = LlmAgent(name="triage", model=Script(transfer("billing")).model, sub_agents=subs)
        return Workflow(name="wf", edges=[(START, root)])

    store = InMemoryEventStore()
    waiting = await Runner(flow("tech"), store=store).run("bill, then router")
    assert waiting.interrupts[0].node_path == "wf@1/triage@1/tech@1/approval@1"

    runner = Runner(flow("network"), store=store)  # the peer billing handed on to is renamed
    done = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: {"approved": True}})

    assert done.status == "failed"
    assert "hands the conversation to 'tech'" in (done.error or "")
    assert "triage, billing, network" in (done.error or "")
