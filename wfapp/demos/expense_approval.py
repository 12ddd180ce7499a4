"""``expense_approval``: small expenses pass, larger ones need a manager, large ones manager and finance.

Under 100 the expense is approved automatically; up to 1,000 a manager decides; above 1,000
the manager and finance decide in parallel and a ``JoinNode`` combines their decisions
(only that path goes through the join).

Human steps (``engine.human``): the manager's question is assigned to the group ``managers``,
is escalated to ``directors`` after two days and rejected by its deadline after five; the
finance question goes to ``finance``, and above 10,000 needs two distinct finance approvals.
Whoever filed the claim approves none of it (four-eyes, the default for approval questions: a
manager's own claim goes to another manager). ``expense_approval_people`` seeds these groups and users.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, WithJsonSchema

from engine import START, Event, JoinNode, RequestInput, Workflow, node
from wfapp.run_labels import label_runs

AUTO_LIMIT = Decimal(100)
POSITIVE = (
    r"^(\d*[1-9]\d*(\.\d+)?|\d+\.\d*[1-9]\d*)$"  # a decimal greater than 0, as text (RE2: no lookahead)
)
MANAGER_LIMIT = Decimal(1000)
QUORUM_LIMIT = Decimal(10000)  # above it, two finance people approve
ESCALATE_AFTER = timedelta(days=2)
DECIDE_WITHIN = timedelta(days=5)
LATE = {"approved": False, "comment": "No manager decided within 5 days: rejected by the deadline."}


class Expense(BaseModel):
    employee: str = Field(min_length=1)
    # A number or its text, as pydantic declares a Decimal: the form sends the text typed, so
    # 12.50 stays 12.50 (a JSON number would come back 12.5); the model keeps it exact.
    amount: Annotated[
        Decimal,
        Field(gt=0),
        WithJsonSchema(
            {
                "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string", "pattern": POSITIVE}],
                "title": "Amount",
            }
        ),
    ]
    category: Literal["travel", "equipment", "meals", "other"]
    description: str


class Decision(BaseModel):
    approved: bool
    comment: str = ""


def triage(node_input: Expense) -> Any:
    """Route by amount: auto, manager, or both (manager and finance)."""
    if node_input.amount < AUTO_LIMIT:
        route = "auto"
    elif node_input.amount <= MANAGER_LIMIT:
        route = "manager"
    else:
        route = "both"
    return Event(output=node_input.model_dump(mode="json"), route=route)


def auto_approve(node_input: dict[str, Any]) -> dict[str, Any]:
    return {
        **node_input,
        "approved": True,
        "decided_by": ["policy"],
        "comments": [f"Approved automatically: under {AUTO_LIMIT}."],
    }


def _human_steps(who: str, amount: Decimal) -> dict[str, Any]:
    if who == "manager":
        return {
            "assignees": ["group:managers"],
            "escalate_after": ESCALATE_AFTER,
            "escalate_to": ["group:directors"],
            "timeout": DECIDE_WITHIN,
            "on_timeout": LATE,
        }
    if amount > QUORUM_LIMIT:
        return {"assignees": ["group:finance"], "approvals_required": 2}
    return {"assignees": ["group:finance"]}


def _ask(who: str):  # type: ignore[no-untyped-def]
    async def ask(node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
        yield RequestInput(
            interrupt_id=f"{who}-approval",
            message=f"{who.capitalize()} approval: {node_input['employee']} claims {node_input['amount']} "
            f"for {node_input['category']} ({node_input['description']})",
            payload=node_input,
            response_schema=Decision,
            **_human_steps(who, Decimal(str(node_input["amount"]))),
        )

    return ask


# Separate nodes for the single and the joint path, so the single path never meets the join.
manager_review = node(_ask("manager"), name="manager_review", rerun_on_resume=False)
manager_approval = node(_ask("manager"), name="manager_approval", rerun_on_resume=False)
finance_approval = node(_ask("finance"), name="finance_approval", rerun_on_resume=False)
combine = JoinNode(name="combine")


def _decision(value: Any) -> Decision:
    return value if isinstance(value, Decision) else Decision.model_validate(value)


def manager_decides(ctx: Any, node_input: Any) -> dict[str, Any]:
    expense = ctx.state["expense"] if "expense" in ctx.state else {}
    decision = _decision(node_input)
    return {
        **expense,
        "approved": decision.approved,
        "decided_by": ["manager"],
        "comments": [f"manager: {decision.comment}"] if decision.comment else [],
    }


def both_decide(ctx: Any, node_input: dict[str, Any]) -> dict[str, Any]:
    expense = ctx.state["expense"] if "expense" in ctx.state else {}
    decisions = [("manager", _decision(node_input["manager_approval"]))]
    finance = node_input["finance_approval"]
    if isinstance(finance, list):  # a quorum: every answer given, in order, with its actor
        decisions += [("finance", _decision(given["answer"])) for given in finance]
    else:
        decisions.append(("finance", _decision(finance)))
    comments = [f"{who}: {d.comment}" for who, d in decisions if d.comment]
    return {
        **expense,
        "approved": all(d.approved for _, d in decisions),
        "decided_by": ["manager", "finance"],
        "comments": comments,
    }


def remember(node_input: Expense) -> Any:
    """Keep the expense in state for the deciding nodes, then triage it."""
    routed = triage(node_input)
    return Event(output=routed.output, route=routed.route, state={"expense": routed.output})


remember_and_triage = node(remember, name="triage")

expense_approval = Workflow(
    name="expense_approval",
    description="Approve an expense claim: automatic under 100, a manager up to 1,000, manager and finance above.",
    edges=[
        (
            START,
            remember_and_triage,
            {"auto": auto_approve, "manager": manager_review, "both": (manager_approval, finance_approval)},
        ),
        (manager_review, node(manager_decides, name="manager_decides")),
        ((manager_approval, finance_approval), combine, node(both_decide, name="both_decide")),
    ],
)

# A run reads "Ana: 2,300.00 travel" in the lists, and ends "approved" or "rejected".
label_runs(expense_approval, summary="{employee}: {amount:,.2f} {category}")
