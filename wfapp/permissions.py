"""Who may do what: the one place that decides, for pages, sockets, the CLI, the admin and the API.

Each action has its own Django permission (superusers hold them all):

- ``wfapp.start_run``: start a run of a workflow;
- ``wfapp.answer_interrupt``: see the inbox and answer questions;
- ``wfapp.cancel_run``: cancel a run;
- ``wfapp.retry_run``: retry a failed run;
- ``wfapp.reassign_interrupt``: reassign a question (an admin's override of assignees and claims).

A question's assignees, claim and quorum narrow who may answer it (``wfapp.assignment``).

The workflow and the run are passed in so that per-workflow rules can be added here later
without changing any caller. ``require`` turns a refusal into ``NotPermitted``.
"""

from __future__ import annotations

from typing import Any

from .errors import NotPermitted

START_PERMISSION = "wfapp.start_run"
ANSWER_PERMISSION = "wfapp.answer_interrupt"
CANCEL_PERMISSION = "wfapp.cancel_run"
RETRY_PERMISSION = "wfapp.retry_run"
REASSIGN_PERMISSION = "wfapp.reassign_interrupt"


def _has(user: Any, permission: str) -> bool:
    """Whether ``user`` is a logged-in user holding ``permission`` (synchronous: it may query)."""
    return bool(user is not None and getattr(user, "is_authenticated", False) and user.has_perm(permission))


def can_start(user: Any, workflow_name: str) -> bool:
    """Whether ``user`` may start runs of ``workflow_name``."""
    return _has(user, START_PERMISSION)


def can_answer(user: Any, interrupt: Any = None) -> bool:
    """Whether ``user`` may see and answer interrupts; given one (an ``Interrupt``), answer it."""
    return _has(user, ANSWER_PERMISSION) and (interrupt is None or answer_refusal(user, interrupt) is None)


# -- issue 17: assignees, claims and quorums decide who answers one question ----------------------


def answer_refusal(user: Any, interrupt: Any) -> str | None:
    """Why ``user``, who may answer questions, may not answer ``interrupt`` (None: they may)."""
    from .assignment import refusal

    return refusal(user, interrupt)


def can_reassign(user: Any) -> bool:
    """Whether ``user`` may hand questions held by or assigned to others to someone else."""
    return _has(user, REASSIGN_PERMISSION)


# -------------------------------------------------------------------------------------------------


def can_cancel(user: Any, session: Any) -> bool:
    """Whether ``user`` may cancel the run ``session`` (a ``Session``)."""
    return _has(user, CANCEL_PERMISSION)


def can_retry(user: Any, session: Any) -> bool:
    """Whether ``user`` may retry the failed run ``session`` (a ``Session``)."""
    return _has(user, RETRY_PERMISSION)


def check_start(user: Any, workflow_name: str) -> None:
    """Raise ``NotPermitted`` unless ``user`` may start runs of ``workflow_name``."""
    require(can_start(user, workflow_name), user, f"start runs of {workflow_name!r}")


def require(allowed: bool, user: Any, action: str) -> None:
    """Raise ``NotPermitted`` saying who may not do ``action`` unless ``allowed``."""
    if not allowed:
        who = str(user.get_username()) if getattr(user, "is_authenticated", False) else "An anonymous user"
        raise NotPermitted(f"{who} may not {action}")
