"""An agent's output is never taken for an engine record after a resume (issue 26.4)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine import START, Context, InMemoryEventStore, LlmAgent, RequestInput, Runner, Workflow, node

from .scripts import Script, call


class Routing(BaseModel):
    transfer_to_agent: str
    messages: list[str]


async def test_an_output_with_the_keys_of_a_transfer_comes_back_as_itself() -> None:
    script = Script(call("final_result", {"transfer_to_agent": "billing", "messages": ["hi"]}))
    router = LlmAgent(name="router", model=script.model, instruction="Route.", output_schema=Routing)

    @node
    def confirm(node_input: Any) -> RequestInput:
        return RequestInput(interrupt_id="ok", message="Send it on?")

    @node(rerun_on_resume=True)
    async def main(ctx: Context, node_input: Any) -> dict[str, Any]:
        routing = await ctx.run_node(router, node_input)
        await ctx.run_node(confirm, None)
        return {"kind": type(routing).__name__, "value": routing.model_dump()}

    runner = Runner(Workflow(name="wf", edges=[(START, main)]), store=InMemoryEventStore())
    waiting = await runner.run("route my question")
    assert waiting.status == "waiting", waiting.error
    done = await runner.resume(waiting.session_id, {"ok": True})

    assert done.status == "completed", done.error
    assert done.output == {"kind": "Routing", "value": {"transfer_to_agent": "billing", "messages": ["hi"]}}
    assert script.calls == 1  # the resume replayed the agent without asking the model again
