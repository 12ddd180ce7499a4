"""What an inbox card shows of a question's human steps: assignees, holder, due time, quorum.

It is shown to one viewer: the holder reads "You hold this" where others read who holds it,
and only the holder (or someone who may reassign) is offered to release it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from django.urls import reverse
from django.utils import timezone

from engine.human import GROUP_PREFIX
from wfapp.errors import RunFailedError
from wfapp.human.assignment import is_requester, may_override_claims, overridden_claim, requester_excluded
from wfapp.human.permissions import answer_refusal, can_reassign
from wfapp.models import Interrupt, RunStatus
from wfapp.runs.failures import failed_node
from wfapp.schema_forms.words import humanize
from wfapp.store.inbox_rows import decode

# The inbox's tabs, in order: (value of ?tab=, label).
INBOX_TABS = (
    ("all", "All"),
    ("mine", "Assigned to me"),
    ("groups", "My groups"),
    ("unassigned", "Unassigned"),
    ("overdue", "Overdue"),
)


@dataclass(frozen=True)
class HumanView:
    """One question's human steps as ``viewer`` reads them (worked out once per card: its
    properties are cached, the card's template reads several of them more than once)."""

    row: Interrupt
    viewer: Any = None  # the user the card is rendered for (None: someone not logged in)

    @cached_property
    def assignees(self) -> list[str]:
        return decode(self.row.assignees)

    @cached_property
    def assignee_labels(self) -> list[str]:
        """The assignees as people read them: "Managers" for ``group:managers``."""
        return [
            humanize(who.removeprefix(GROUP_PREFIX)) if who.startswith(GROUP_PREFIX) else who
            for who in self.assignees
        ]

    @property
    def claimed_by(self) -> str:
        return self.row.claimed_by

    @property
    def mine(self) -> bool:
        """Whether the viewer holds the question."""
        viewer = self.viewer
        return (
            viewer is not None and bool(self.row.claimed_by) and self.row.claimed_by == viewer.get_username()
        )

    @cached_property
    def may_release(self) -> bool:
        """Whether the viewer is offered to release the claim: theirs, or they may reassign."""
        return (
            bool(self.row.claimed_by) and self.viewer is not None and (self.mine or can_reassign(self.viewer))
        )

    @property
    def due_at(self) -> datetime | None:
        return self.row.due_at

    @property
    def overdue(self) -> bool:
        return self.row.due_at is not None and self.row.due_at < timezone.now()

    @property
    def quorum(self) -> bool:
        return self.row.approvals_required > 1

    @cached_property
    def approvers(self) -> list[str]:
        return [str(given.get("actor", "")) for given in self.row.approvals or []]

    @property
    def progress(self) -> str:
        """``"1 of 2 approvals"``."""
        return f"{len(self.approvers)} of {self.row.approvals_required} approvals"

    @property
    def active(self) -> bool:
        return bool(self.row.assignees or self.row.claimed_by or self.row.due_at or self.quorum)

    @cached_property
    def override(self) -> str | None:
        """The holder whose claim the viewer would answer over, once they confirm it (None: no
        such claim, or the viewer may not override it and ``refusal`` says so)."""
        viewer = self.viewer
        if viewer is None or not self.row.claimed_by or self.mine or not may_override_claims(viewer):
            return None
        return overridden_claim(viewer, self.row)

    @property
    def approved_by_viewer(self) -> bool:
        return self.viewer is not None and str(self.viewer.get_username()) in self.approvers

    @property
    def personal(self) -> bool:
        """Whether the card reads differently for different viewers of the same rights: a
        question with assignees, a holder or a quorum's approvals (who holds it, who may release
        it, and who may answer it depend on who is looking). A requester kept out (four-eyes)
        reads differently only for the run's requester: ``fanout`` keys on that."""
        row = self.row
        return bool(row.assignees or row.claimed_by or row.approvals)

    @cached_property
    def refusal(self) -> str | None:
        """Why the viewer may not answer this question, said to them (None: they may). The
        decision is ``answer_refusal``'s; asked only of ``personal`` questions (a plain question
        costs no query)."""
        row, viewer = self.row, self.viewer
        if row.session.status == RunStatus.FAILED:
            return f"{RunFailedError(failed_node(row.session_id))}: this question waits until then."
        bound = self.personal or requester_excluded(row)
        refused = answer_refusal(viewer, row) if viewer is not None and bound else None
        if refused is None:
            return None
        name = str(viewer.get_username())
        if name in self.approvers:
            left = max(row.approvals_required - len(self.approvers), 1)
            return f"You approved; waiting for {left} more approval{'s' if left > 1 else ''}."
        if requester_excluded(row) and is_requester(viewer, row):
            return "You started this run, so someone else approves it."
        if row.claimed_by and row.claimed_by != name:
            return f"Claimed by {row.claimed_by}: only they can answer it, unless it is released."
        if self.assignees:
            names = ", ".join(who.removeprefix(GROUP_PREFIX) for who in self.assignees)
            return f"Assigned to {names}: you cannot answer it."
        return f"You cannot answer it: {refused}."

    @property
    def claim_url(self) -> str:
        return reverse("interrupt-claim", args=[self.row.pk])

    @property
    def unclaim_url(self) -> str:
        return reverse("interrupt-unclaim", args=[self.row.pk])

    @property
    def reassign_url(self) -> str:
        return reverse("interrupt-reassign", args=[self.row.pk])
