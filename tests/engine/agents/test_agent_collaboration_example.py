"""The ADK docs' collaboration page ("Build collaborative agent teams") on ``engine`` (issue 26.2).

Its "Get started" example runs with only its import changed (``google.adk`` -> ``engine``) and
a model given to the coordinator (the sub-agents use their parent's, as in ADK). The page
leaves its tools and schemas to the reader; they are defined here. One offline
``FunctionModel`` plays the three agents, telling them apart by the tools each is offered.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel
from pydantic_ai import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from engine import START, Agent, InMemoryEventStore, Runner, Workflow

# What the page leaves to the reader.


class FlightInput(BaseModel):
    destination: str
    date: str


class FlightResult(BaseModel):
    confirmation: str
    seat: str


def get_weather(city: str) -> str:
    """The forecast for a city."""
    return f"Sunny, 24C in {city}"


def user_info() -> dict[str, str]:
    """Who the user is."""
    return {"name": "Ada", "home": "Oslo"}


def geocode_address(address: str) -> dict[str, float]:
    """Coordinates of an address."""
    return {"lat": 41.9, "lon": 12.5}


def search_flights(destination: str, date: str) -> list[str]:
    """Flights to a destination on a date."""
    return ["AZ123", "FR456"]


def book_flight(flight: str, seat: str) -> str:
    """Book a seat on a flight."""
    return f"{flight}-{seat}-OK"


def team_model(asked: Counter[str]) -> FunctionModel:
    """Plays the coordinator, the weather checker and the flight booker."""

    def play(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools = {t.name for t in info.function_tools}
        who = (
            "coordinator" if "flight_booker" in tools else "weather" if "get_weather" in tools else "flights"
        )
        asked[who] += 1
        step = sum(1 for m in messages if m.kind == "response")
        if who == "weather":
            if step == 0:
                return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Rome"})])
            return ModelResponse(parts=[TextPart("Sunny, 24C in Rome.")])
        if who == "flights":
            if step == 0:
                return ModelResponse(
                    parts=[ToolCallPart("search_flights", {"destination": "Rome", "date": "Fri"})]
                )
            if step == 1:
                return ModelResponse(parts=[TextPart("AZ123 or FR456: window or aisle?")])
            if step == 2:
                return ModelResponse(
                    parts=[ToolCallPart("book_flight", {"flight": "AZ123", "seat": "aisle"})]
                )
            return ModelResponse(
                parts=[ToolCallPart("finish_task", {"confirmation": "AZ123-aisle-OK", "seat": "aisle"})]
            )
        if step == 0:
            return ModelResponse(
                parts=[ToolCallPart("weather_checker", {"request": "Weather in Rome on Friday?"})]
            )
        if step == 1:
            return ModelResponse(
                parts=[ToolCallPart("flight_booker", {"destination": "Rome", "date": "Fri"})]
            )
        result = messages[-1].parts[-1].content
        return ModelResponse(parts=[TextPart(f"Sunny in Rome; booked {result['confirmation']}.")])

    return FunctionModel(play)


def travel_planner(model: FunctionModel) -> Agent:
    # The page's example, its import and the coordinator's model changed.
    weather_agent = Agent(
        name="weather_checker",
        mode="single_turn",  # no user interaction
        tools=[get_weather, user_info, geocode_address],
    )
    flight_agent = Agent(
        name="flight_booker",
        mode="task",  # can ask user questions
        input_schema=FlightInput,
        output_schema=FlightResult,
        tools=[search_flights, book_flight],
    )
    root = Agent(
        name="travel_planner",  # coordinator agent
        model=model,
        sub_agents=[weather_agent, flight_agent],
        # Auto-injects delegation tools named after each subagent:
        # weather_checker, flight_booker
    )
    return root


async def test_the_docs_collaboration_example_runs_as_documented() -> None:
    asked: Counter[str] = Counter()
    store = InMemoryEventStore()
    runner = Runner(Workflow(name="trip", edges=[(START, travel_planner(team_model(asked)))]), store=store)

    waiting = await runner.run("Plan a trip to Rome on Friday")
    [question] = waiting.interrupts  # the task agent asks the user
    assert question.node_path == "trip@1/travel_planner@1/flight_booker@2.1/reply@1"
    assert question.message == "AZ123 or FR456: window or aisle?"
    assert asked == {"coordinator": 2, "weather": 2, "flights": 2}

    done = await runner.resume(waiting.session_id, {question.id: "aisle"})

    assert done.status == "completed", done.error
    assert done.output == "Sunny in Rome; booked AZ123-aisle-OK."  # the coordinator's answer
    # The resume asked only for the steps after the answer: no recorded step twice.
    assert asked == {"coordinator": 3, "weather": 2, "flights": 4}
    outputs = {
        e.node_path: e.output for e in await store.list_events(done.session_id) if e.kind == "completed"
    }
    assert outputs["trip@1/travel_planner@1/weather_checker@1.1"] == "Sunny, 24C in Rome."
    assert outputs["trip@1/travel_planner@1/flight_booker@2.1"] == {
        "confirmation": "AZ123-aisle-OK",
        "seat": "aisle",
    }
