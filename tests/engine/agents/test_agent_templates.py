"""Instruction placeholders the docs' agent examples write (issue 26.1)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine import START, Context, Event, LlmAgent, Runner, Workflow, node

from .scripts import Script, text


class CityTime(BaseModel):
    time_info: str  # time information
    city: str  # city name


def city_flow(script: Script, instruction: str) -> Workflow:
    @node
    def city_time_function(city: str) -> CityTime:
        return CityTime(time_info="10:10 AM", city=city)

    city_report_agent = LlmAgent(
        name="city_report_agent", model=script.model, input_schema=CityTime, instruction=instruction
    )

    @node(rerun_on_resume=True)
    async def city_workflow(ctx: Context) -> Any:
        yield Event(state={"user:name": "Ann", "order": {"id": "B7"}, "mood": None})
        city_time = await ctx.run_node(city_time_function, "Paris")
        yield await ctx.run_node(city_report_agent, city_time)

    return Workflow(name="wf", edges=[(START, city_workflow)])


async def test_model_fields_prefixed_state_and_dotted_values_are_filled() -> None:
    script = Script(text("report"))
    instruction = (
        "It is {CityTime.time_info} in { city }. Greet {user:name} about order {order.id}. "
        'Mood: {mood}{weather?}. Keep JSON like {"a": 1} as it is.'
    )
    done = await Runner(city_flow(script, instruction)).run(None)
    assert done.status == "completed", done.error
    assert script.instructions == [
        'It is 10:10 AM in Paris. Greet Ann about order B7. Mood: . Keep JSON like {"a": 1} as it is.'
    ]


async def test_a_placeholder_that_cannot_be_filled_fails_instead_of_reaching_the_model() -> None:
    for instruction, named in (
        ("It is {CityTime.timezone}.", "CityTime.timezone"),
        ("Read {artifact.notes}.", "artifact.notes"),
        ("Hello {temp:visitor}.", "temp:visitor"),
    ):
        script = Script(text("report"))
        failed = await Runner(city_flow(script, instruction)).run(None)
        assert failed.status == "failed"
        assert named in (failed.error or "")
        assert script.calls == 0
