"""Who answers which question of a workflow, for its page: each asking step with the groups and
people its questions were assigned to, whom they escalate to and how many approvals they need,
as the workflow's latest questions were asked (a step decides its assignees when it asks); and
the workflow's access rules, which say which groups may answer at all."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wfapp.models import Interrupt, WorkflowAccess

RECENT = 500  # the newest questions of the workflow read for it


@dataclass
class Step:
    """One asking step: its name and who its questions went to."""

    name: str
    assignees: list[str] = field(default_factory=list)
    escalate_to: list[str] = field(default_factory=list)
    approvals: list[int] = field(default_factory=list)

    @property
    def approvals_text(self) -> str:
        return " or ".join(str(n) for n in sorted(set(self.approvals)))


def _who(assignee: str) -> str:
    return f"group {assignee[6:]}" if assignee.startswith("group:") else assignee


def _add(into: list[Any], values: list[Any]) -> None:
    into.extend(value for value in values if value not in into)


def step_name(node_path: str) -> str:
    """``wf@1/manager_review@1`` -> ``manager_review``."""
    return node_path.rsplit("/", 1)[-1].split("@", 1)[0]


def asking_steps(workflow: str) -> list[Step]:
    rows = Interrupt.objects.filter(workflow=workflow).order_by("-pk").values_list("node_path", "policy")
    steps: dict[str, Step] = {}
    for path, policy in rows[:RECENT]:
        step = steps.setdefault(step_name(path), Step(step_name(path)))
        policy = policy if isinstance(policy, dict) else {}
        _add(step.assignees, [_who(str(a)) for a in policy.get("assignees") or []])
        _add(step.escalate_to, [_who(str(a)) for a in policy.get("escalate_to") or []])
        _add(step.approvals, [int(policy.get("approvals_required") or 1)])
    return sorted(steps.values(), key=lambda step: step.name)


def rules(workflow: str) -> list[WorkflowAccess]:
    return list(
        WorkflowAccess.objects.filter(workflow=workflow).select_related("group").order_by("group__name")
    )
