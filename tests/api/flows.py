"""Workflows of the API's tests: a question then a step that waits for a release file; questions
whose schemas only the running code knows; an agent team whose task agent asks the user."""

from __future__ import annotations

from engine import START, LlmAgent, RequestInput, Workflow, node
from tests.wfapp.flows import ask, wait_for_file

ask_then_wait = Workflow(name="ask_then_wait", edges=[(START, ask, wait_for_file)])
PATH = "tests.api.flows:ask_then_wait"


def _schema_for(kind: str) -> dict[str, object]:
    return {"type": kind}


Decision = {"type": "object", "required": ["ok"]}  # a global the body's local name must not reach


@node(rerun_on_resume=False)
async def computed(node_input: dict[str, str]):  # type: ignore[no-untyped-def]
    Decision = _schema_for(node_input["kind"])
    yield RequestInput(interrupt_id=node_input["id"], message="Computed?", response_schema=Decision)


@node(rerun_on_resume=False)
async def literal(node_input: object):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="plain", message="Any answer?")


computed_questions = Workflow(name="computed_questions", edges=[(START, computed, literal)])
COMPUTED_PATH = "tests.api.flows:computed_questions"


team = Workflow(
    name="agent_team",
    edges=[
        (
            START,
            LlmAgent(
                name="planner",
                model="test",
                sub_agents=[
                    LlmAgent(name="booker", mode="task", description="Books."),
                    LlmAgent(name="checker", mode="single_turn", description="Checks."),
                ],
            ),
        )
    ],
)
TEAM_PATH = "tests.api.flows:team"
