"""Agent teams (issue 26 item 2, ADK's collaboration modes): a coordinator delegates to
``task`` and ``single_turn`` sub-agents through one tool per sub-agent and carries on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from engine import START, InMemoryEventStore, LlmAgent, Runner, Workflow, node
from engine.agents import AgentConfigurationError

from .scripts import Script, alone, call, part_texts, text


class FlightInput(BaseModel):
    destination: str


class FlightResult(BaseModel):
    booking: str


def team(coordinator: Script, weather: Script, flights: Script, **flight_options: Any) -> Workflow:
    weather_agent = LlmAgent(
        name="weather_checker", model=weather.model, mode="single_turn", description="Checks the weather."
    )
    flight_agent = LlmAgent(
        name="flight_booker",
        model=flights.model,
        mode="task",
        description="Books flights.",
        input_schema=FlightInput,
        output_schema=FlightResult,
        **flight_options,
    )
    return alone(
        LlmAgent(
            name="travel_planner",
            model=coordinator.model,
            instruction="Plan the trip.",
            sub_agents=[weather_agent, flight_agent],
        )
    )


def returned(script: Script, number: int) -> list[Any]:
    """What the tools returned to the model in request ``number``."""
    return [part.content for part in script.last_parts(number)]


async def test_the_coordinator_is_offered_one_tool_per_sub_agent_as_adk_builds_them(
    store: InMemoryEventStore,
) -> None:
    offered: list[Any] = []

    def look(messages: Any, info: Any) -> Any:
        offered.extend(info.function_tools)
        offered.append([t.name for t in info.output_tools])
        return text("Nothing to do.")

    result = await Runner(team(Script(look), Script(), Script()), store=store).run("hello")

    assert result.output == "Nothing to do.", result.error
    weather, flights, outputs = offered
    assert (weather.name, weather.description) == ("weather_checker", "Checks the weather.")
    assert weather.parameters_json_schema == {
        "type": "object",
        "properties": {"request": {"type": "string"}},
        "required": ["request"],
    }
    assert flights.name == "flight_booker"
    assert flights.description == (
        "Books flights.\nIMPORTANT: This tool delegates execution to a specialized agent. "
        "Do NOT call this tool in parallel with any other tools."
    )
    assert flights.parameters_json_schema == FlightInput.model_json_schema()
    assert "transfer_to_agent" not in outputs  # delegated agents are tools, not transfer targets


async def test_a_single_turn_sub_agent_returns_its_answer_to_the_coordinator(
    store: InMemoryEventStore, read_log: Any
) -> None:
    coordinator = Script(call("weather_checker", {"request": "Paris tomorrow?"}), text("Pack sunglasses."))
    weather = Script(text("Sunny in Paris."))
    runner = Runner(team(coordinator, weather, Script()), store=store)
    result = await runner.run("a weekend in Paris")

    assert result.status == "completed", result.error
    assert result.output == "Pack sunglasses."  # the coordinator's final answer, not the sub-agent's
    assert returned(coordinator, 2) == ["Sunny in Paris."]
    assert weather.requests[0][-1].parts[-1].content == "Paris tomorrow?"  # only its request
    log = await read_log(runner, result.session_id)
    assert "wf@1/travel_planner@1/weather_checker@1.1/model@1" in log.ran()
    assert log.outputs()["wf@1/travel_planner@1/weather_checker@1.1"] == "Sunny in Paris."


async def test_a_task_sub_agent_asks_the_user_then_finishes_and_the_coordinator_goes_on(
    store: InMemoryEventStore, read_log: Any
) -> None:
    coordinator = Script(call("flight_booker", {"destination": "Rome"}), text("Booked: AZ1."))
    flights = Script(text("Which day?"), call("finish_task", {"booking": "AZ1"}))
    runner = Runner(team(coordinator, Script(), flights, output_key="flight"), store=store)

    waiting = await runner.run("fly me to Rome")
    [question] = waiting.interrupts
    assert question.message == "Which day?"
    assert question.node_path == "wf@1/travel_planner@1/flight_booker@1.1/reply@1"
    assert json.loads(flights.requests[0][-1].parts[-1].content) == {"destination": "Rome"}
    assert "call `finish_task`" in (flights.instructions[0] or "")

    done = await runner.resume(waiting.session_id, {question.id: "Friday"})

    assert done.status == "completed", done.error
    assert done.output == "Booked: AZ1."
    assert returned(coordinator, 2) == [{"booking": "AZ1"}]
    assert (await read_log(runner, done.session_id)).state()["flight"] == {"booking": "AZ1"}
    assert (coordinator.calls, flights.calls) == (2, 2)  # the resume asked no model twice


async def test_a_task_agent_without_an_output_schema_finishes_with_a_result(
    store: InMemoryEventStore,
) -> None:
    offered: list[Any] = []

    def finish(messages: Any, info: Any) -> Any:
        offered.extend(t for t in info.output_tools if t.name == "finish_task")
        return call("finish_task", {"result": "Booked the hotel."})

    hotel = LlmAgent(name="hotel_booker", model=Script(finish).model, mode="task")
    root = LlmAgent(
        name="planner",
        model=Script(call("hotel_booker", {"request": "a room in Rome"}), text("All set.")).model,
        sub_agents=[hotel],
    )
    result = await Runner(alone(root), store=store).run("trip")

    assert result.output == "All set.", result.error
    [tool] = offered
    assert tool.parameters_json_schema["properties"]["result"]["type"] == "string"


async def test_delegation_arguments_are_checked_against_the_input_schema(store: InMemoryEventStore) -> None:
    coordinator = Script(
        call("flight_booker", {"dest": "Rome"}), call("flight_booker", {"destination": "Rome"}), text("Done.")
    )
    flights = Script(call("finish_task", {"booking": "AZ9"}))
    result = await Runner(team(coordinator, Script(), flights), store=store).run("Rome")

    assert result.output == "Done.", result.error
    [refusal] = part_texts(coordinator.last_parts(2))
    assert "Agent 'flight_booker' takes FlightInput" in refusal
    assert "destination: Field required" in refusal
    assert flights.calls == 1  # it ran only on valid arguments


async def test_invalid_delegation_arguments_fail_the_node_clearly_once_retries_are_spent(
    store: InMemoryEventStore,
) -> None:
    coordinator = Script(*[call("flight_booker", {"dest": "Rome"})] * 3)
    flights = Script()
    result = await Runner(team(coordinator, Script(), flights), store=store).run("Rome")

    assert result.status == "failed"
    assert result.error_type == "AgentOutputError"
    assert "Agent 'flight_booker' takes FlightInput" in (result.error or "")
    assert "destination: Field required" in (result.error or "")
    assert flights.calls == 0


async def test_a_restarted_team_replays_every_recorded_step_without_asking_a_model() -> None:
    first = (
        Script(call("weather_checker", {"request": "Rome?"}), call("flight_booker", {"destination": "Rome"})),
        Script(text("Rainy.")),
        Script(text("Window or aisle?")),
    )
    store = InMemoryEventStore()
    waiting = await Runner(team(*first), store=store).run("Rome")
    [question] = waiting.interrupts
    saved = json.loads(json.dumps(store.dump(waiting.session_id)))

    later = (
        Script(text("Take an umbrella; AZ1 booked.")),
        Script(),
        Script(call("finish_task", {"booking": "AZ1"})),
    )
    runner = Runner(team(*later), store=InMemoryEventStore.load(saved))  # a fresh process
    done = await runner.resume(waiting.session_id, {question.id: "window"})

    assert done.status == "completed", done.error
    assert done.output == "Take an umbrella; AZ1 booked."
    assert [s.calls for s in first] == [2, 1, 1]
    assert [s.calls for s in later] == [1, 0, 1]  # only the steps after the answer


async def test_parallel_single_turn_calls_each_run_their_own_sub_agent(
    store: InMemoryEventStore, read_log: Any
) -> None:
    both = call("weather_checker", {"request": "Rome?"}, "c1")
    both.parts.append(call("weather_checker", {"request": "Oslo?"}, "c2").parts[0])

    def answer(messages: Any, info: Any) -> Any:
        return text(f"Sunny in {messages[-1].parts[-1].content[:-1]}.")

    coordinator = Script(both, text("Both sunny."))
    weather = Script(answer, answer)
    runner = Runner(team(coordinator, weather, Script()), store=store)
    result = await runner.run("Rome and Oslo")

    assert result.output == "Both sunny.", result.error
    assert sorted(returned(coordinator, 2)) == ["Sunny in Oslo.", "Sunny in Rome."]
    outputs = (await read_log(runner, result.session_id)).outputs()
    assert outputs["wf@1/travel_planner@1/weather_checker@1.1"] == "Sunny in Rome."
    assert outputs["wf@1/travel_planner@1/weather_checker@1.2"] == "Sunny in Oslo."


async def test_transfer_targets_are_the_sub_agents_in_chat_mode(store: InMemoryEventStore) -> None:
    seen: list[Any] = []

    def look(messages: Any, info: Any) -> Any:
        [transfer] = [t for t in info.output_tools if t.name == "transfer_to_agent"]
        seen.append(transfer.parameters_json_schema["properties"]["agent_name"])
        seen.append(sorted(t.name for t in info.function_tools))
        return text("ok")

    root = LlmAgent(
        name="desk",
        model=Script(look).model,
        sub_agents=[LlmAgent(name="sales"), LlmAgent(name="helper", mode="single_turn")],
    )
    result = await Runner(alone(root), store=store).run("hi")

    assert result.output == "ok", result.error
    assert seen[0].get("enum", [seen[0].get("const")]) == ["sales"]
    assert seen[1] == ["helper"]


async def test_changing_a_sub_agents_mode_changes_what_its_parent_is_offered(
    store: InMemoryEventStore,
) -> None:
    seen: list[Any] = []

    def look(messages: Any, info: Any) -> Any:
        seen.append(sorted(t.name for t in info.function_tools))
        return text("ok")

    helper = LlmAgent(name="helper")
    root = LlmAgent(name="desk", model=Script(look, look).model, sub_agents=[helper])
    runner = Runner(alone(root), store=store)
    await runner.run("hi")
    helper.mode = "single_turn"
    await runner.run("hi")

    assert seen == [[], ["helper"]]


def test_a_task_agent_must_be_a_leaf() -> None:
    with pytest.raises(AgentConfigurationError, match="mode='task' must be a leaf"):
        LlmAgent(name="booker", mode="task", sub_agents=[LlmAgent(name="helper")])


def desk_with_booker(triage: Script, booker: Script) -> Workflow:
    booker_agent = LlmAgent(
        name="booker",
        model=booker.model,
        input_schema=FlightInput,
        instruction="Book a flight to {destination}.",
    )
    root = LlmAgent(name="triage", model=triage.model, sub_agents=[booker_agent])
    return alone(root)


async def test_a_sub_agent_reached_by_transfer_takes_the_input_its_schema_names(
    store: InMemoryEventStore,
) -> None:
    triage, booker = Script(call("transfer_to_agent", {"agent_name": "booker"})), Script(text("Booked Rome."))
    result = await Runner(desk_with_booker(triage, booker), store=store).run({"destination": "Rome"})

    assert result.output == "Booked Rome.", result.error
    assert booker.instructions == ["Book a flight to Rome."]  # filled from the checked input


async def test_a_transfer_to_a_sub_agent_whose_input_schema_the_input_fails_fails_clearly(
    store: InMemoryEventStore,
) -> None:
    triage, booker = Script(call("transfer_to_agent", {"agent_name": "booker"})), Script()
    result = await Runner(desk_with_booker(triage, booker), store=store).run({"city": "Rome"})

    assert result.status == "failed"
    assert "Node 'booker': input does not match FlightInput: destination: Field required" in (
        result.error or ""
    )
    assert "handed the conversation by transfer_to_agent" in (result.error or "")
    assert booker.calls == 0


async def test_a_task_agent_as_a_workflow_node_asks_then_hands_its_result_on(
    store: InMemoryEventStore,
) -> None:

    @node
    def confirm(node_input: Any) -> str:
        return f"confirmed: {node_input['result']}"

    booker = Script(text("Which hotel?"), call("finish_task", {"result": "Hotel Roma booked"}))
    agent = LlmAgent(name="hotel_booker", model=booker.model, mode="task")
    runner = Runner(Workflow(name="wf", edges=[(START, agent, confirm)]), store=store)

    waiting = await runner.run("a hotel in Rome")
    [question] = waiting.interrupts
    assert question.message == "Which hotel?"
    done = await runner.resume(waiting.session_id, {question.id: "the cheapest"})

    assert done.status == "completed", done.error
    assert done.output == "confirmed: Hotel Roma booked"
    assert booker.calls == 2
