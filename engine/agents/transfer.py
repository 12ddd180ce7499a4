"""Agent transfer (seed 000, ADK's rules): who an agent may hand the conversation to, and how.

An agent may transfer to its sub-agents, to its parent (unless ``disallow_transfer_to_parent``)
and to its peers, the parent's other sub-agents (unless ``disallow_transfer_to_peers``). The
agent placed in the workflow is the root of the transfer: it offers only its sub-agents (its
own parent, if it has one, is not part of this execution). The root runs every transfer: each
agent it hands the conversation to runs as its child (``triage@1/billing@1``) on a
``Handoff`` and answers, or returns a ``Transfer`` (recorded as that child's output), so a
replay hands the same conversation to the same agents without asking any model again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, create_model
from pydantic_ai import ModelMessage, ModelMessagesTypeAdapter, ToolOutput

from .delegation import DELEGATED
from .errors import AgentConfigurationError

if TYPE_CHECKING:
    from .agent import LlmAgent

TRANSFER_TOOL = "transfer_to_agent"
MAX_TRANSFERS = 25  # per execution of the root: a model that only ever transfers fails the node


@dataclass(frozen=True, slots=True)
class Handoff:
    """The conversation so far, handed to another agent by ``transfer_to_agent``, and the input
    the root of the transfer was given (what an agent with an ``input_schema`` takes)."""

    messages: list[ModelMessage]
    input: Any = None


class TransferChoice(BaseModel):
    """The base of every ``transfer_to_agent`` argument model (``agent_name``: one of the targets)."""

    agent_name: str


class Transfer(BaseModel):
    """An agent's choice to hand the conversation on: to whom, and the messages so far (as the log keeps them)."""

    transfer_to_agent: str
    messages: list[dict[str, Any]]

    @classmethod
    def of(cls, agent: str, messages: list[ModelMessage]) -> Transfer:
        return cls(
            transfer_to_agent=agent, messages=ModelMessagesTypeAdapter.dump_python(messages, mode="json")
        )

    @staticmethod
    def recorded(data: Any) -> bool:
        return isinstance(data, dict) and set(data) == {"transfer_to_agent", "messages"}

    def handoff(self, node_input: Any = None) -> Handoff:
        return Handoff(ModelMessagesTypeAdapter.validate_python(self.messages), node_input)


HANDED_BACK = "handoff_result"


class HandoffResult(BaseModel):
    """What an agent handed the conversation gives the root: its answer, or the ``Transfer`` it
    chose. Recorded as ``{"handoff_result": {"answer": ...}}`` or ``{"handoff_result":
    {"transfer": ...}}``, and read back only by the root that handed the conversation on, so no
    output of an agent (whatever its keys) is ever taken for an engine record."""

    handoff_result: dict[str, Any]

    @classmethod
    def of(cls, output: Any) -> HandoffResult:
        if isinstance(output, Transfer):
            return cls(handoff_result={"transfer": output})
        return cls(handoff_result={"answer": output})

    @staticmethod
    def recorded(data: Any) -> bool:
        return isinstance(data, dict) and set(data) == {HANDED_BACK} and isinstance(data[HANDED_BACK], dict)


def handed_back(result: Any, target: LlmAgent) -> Any:
    """The answer or ``Transfer`` in what the agent handed the conversation gave back (live, or
    read back from the log); logs written before ``HandoffResult`` recorded a transfer bare."""
    if isinstance(result, HandoffResult):
        data = result.handoff_result
    elif HandoffResult.recorded(result):
        data = result[HANDED_BACK]
    elif Transfer.recorded(result):  # an older log: only a handed-to agent's output was read so
        return Transfer.model_validate(result)
    else:
        return result
    transfer = data.get("transfer")
    if transfer is not None:
        return transfer if isinstance(transfer, Transfer) else Transfer.model_validate(transfer)
    answer = data.get("answer")
    return answer if isinstance(result, HandoffResult) else target.restore_output(answer)


def adopt(parent: LlmAgent, subs: list[LlmAgent]) -> None:
    """Make ``parent`` the parent of ``subs``; an agent has one parent, and names are unique in a tree."""
    for sub in subs:
        if sub.parent_agent is not None and sub.parent_agent is not parent:
            raise AgentConfigurationError(
                f"Agent '{sub.name}' is already a sub-agent of '{sub.parent_agent.name}'; an agent "
                f"has one parent, so '{parent.name}' needs an agent of its own"
            )
    names = [agent.name for agent in tree(parent)]
    doubles = sorted({name for name in names if names.count(name) > 1})
    if doubles:
        raise AgentConfigurationError(
            f"Agent '{parent.name}': agent names must be unique among it and its sub-agents; "
            f"{doubles} appear more than once"
        )


def tree(agent: LlmAgent) -> list[LlmAgent]:
    """``agent`` and all its sub-agents, depth first."""
    found = [agent]
    for sub in agent.sub_agents:
        found.extend(tree(sub))
    return found


def targets(agent: LlmAgent, *, root: bool) -> list[LlmAgent]:
    """The agents ``agent`` may transfer to (ADK's order: sub-agents, parent, peers); sub-agents
    in task or single_turn mode are delegated to as tools instead (``delegation.py``)."""
    chosen = [sub for sub in agent.sub_agents if sub.mode not in DELEGATED]
    parent = agent.parent_agent
    if root or parent is None:
        return chosen
    if not agent.disallow_transfer_to_parent:
        chosen.append(parent)
    if not agent.disallow_transfer_to_peers:
        chosen.extend(peer for peer in parent.sub_agents if peer is not agent and peer.mode not in DELEGATED)
    return chosen


def transfer_output(agent: LlmAgent, *, root: bool) -> ToolOutput[Any] | None:
    """The ``transfer_to_agent`` output tool, restricted to the agents ``agent`` may transfer to."""
    chosen = targets(agent, root=root)
    if not chosen:
        return None
    choice: Any = Literal.__getitem__(tuple(a.name for a in chosen))
    kind = create_model("TransferToAgent", __base__=TransferChoice, agent_name=(choice, ...))
    described = "; ".join(f"{a.name}: {_role(agent, a)}" for a in chosen)
    return ToolOutput(
        kind, name=TRANSFER_TOOL, description=f"Hand the conversation to another agent ({described})."
    )


def chosen_agent(output: Any) -> str | None:
    """The agent a ``transfer_to_agent`` output names (None for any other output)."""
    return output.agent_name if isinstance(output, TransferChoice) else None


def _role(agent: LlmAgent, other: LlmAgent) -> str:
    if other is agent.parent_agent:
        return f"the agent that handed you this conversation; {other.description or 'no description'}"
    return other.description or "no description"
