"""What an inbox card shows of a question's human steps: assignees, holder, due time, quorum.

It is shown to one viewer: the holder reads "You hold this" where others read who holds it,
and only the holder (or someone who may reassign) is offered to release it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.urls import reverse
from django.utils import timezone

from wfapp.assignment import decode
from wfapp.models import Interrupt
from wfapp.permissions import can_reassign

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
    row: Interrupt
    viewer: Any = None  # the user the card is rendered for (None: someone not logged in)

    @property
    def assignees(self) -> list[str]:
        return decode(self.row.assignees)

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

    @property
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

    @property
    def approvers(self) -> list[str]:
        return [str(given.get("actor", "")) for given in self.row.approvals or []]

    @property
    def progress(self) -> str:
        """``"1 of 2 approvals"``."""
        return f"{len(self.approvers)} of {self.row.approvals_required} approvals"

    @property
    def active(self) -> bool:
        return bool(self.row.assignees or self.row.claimed_by or self.row.due_at or self.quorum)

    @property
    def claim_url(self) -> str:
        return reverse("interrupt-claim", args=[self.row.pk])

    @property
    def unclaim_url(self) -> str:
        return reverse("interrupt-unclaim", args=[self.row.pk])

    @property
    def reassign_url(self) -> str:
        return reverse("interrupt-reassign", args=[self.row.pk])
