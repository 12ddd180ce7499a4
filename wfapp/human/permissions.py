"""Who may do what: the one place that decides, for pages, sockets, the CLI, the admin and the API.

Each action has its own Django permission (superusers hold them all):

- ``wfapp.start_run``: start a run of a workflow;
- ``wfapp.answer_interrupt``: see the inbox and answer questions;
- ``wfapp.cancel_run``: cancel a run;
- ``wfapp.retry_run``: retry a failed run;
- ``wfapp.retry_with_edited_input``: on top of ``retry_run``, retry a failed node with an edited
  input; never for the run's own requester (``edit_refusal``);
- ``wfapp.reassign_interrupt``: reassign a question (an admin's override of assignees and claims).

A question's assignees, claim and quorum narrow who may answer it (``wfapp.human.assignment``).

Per-workflow rules (``WorkflowAccess``, managed in the admin) narrow this by Django group. A
workflow with no rule keeps the global permissions above, and every logged-in user may view its
runs. Once a workflow has a rule, only the rules decide for it: a user may start its runs, answer
its questions or view its runs when one of the user's groups has a rule for it saying so
(``may_start``, ``may_answer``, ``may_view``; answering and starting include viewing).
Cancelling and retrying keep their global permission and need the view on top.

A user object may carry ``wfapp_workflows`` (a set of names: an API token limited to those
workflows, see ``wfapp.api.tokens``): every action on any other workflow is then refused, even
to a superuser.

``workflow_filter`` is the same decision as a query filter, for every list (``wfapp.web.queries``
applies it); ``may`` decides for one workflow. Both cost no query of their own when used in a
list (a subquery) and one small query for a single decision. ``require`` turns a refusal into
``NotPermitted``.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from typing import Any, Literal

from django.db.models import Q

from wfapp.errors import NotPermitted

START_PERMISSION = "wfapp.start_run"
ANSWER_PERMISSION = "wfapp.answer_interrupt"
CANCEL_PERMISSION = "wfapp.cancel_run"
RETRY_PERMISSION = "wfapp.retry_run"
EDIT_RETRY_PERMISSION = "wfapp.retry_with_edited_input"
REASSIGN_PERMISSION = "wfapp.reassign_interrupt"

Action = Literal["start", "answer", "view"]

# The global permission each action needs on a workflow without rules (None: logged in is enough).
_GLOBAL: dict[str, str | None] = {"start": START_PERMISSION, "answer": ANSWER_PERMISSION, "view": None}
# The rule columns that grant each action.
_GRANTS: dict[str, tuple[str, ...]] = {
    "start": ("may_start",),
    "answer": ("may_answer",),
    "view": ("may_view", "may_answer", "may_start"),
}


def _logged_in(user: Any) -> bool:
    return bool(user is not None and getattr(user, "is_authenticated", False))


def _has(user: Any, permission: str) -> bool:
    """Whether ``user`` is a logged-in user holding ``permission`` (synchronous: it may query)."""
    return _logged_in(user) and bool(user.has_perm(permission))


def _globally(user: Any, action: Action) -> bool:
    permission = _GLOBAL[action]
    return _logged_in(user) and (permission is None or _has(user, permission))


def _granted(user: Any, action: Action) -> Any:
    """The rules granting ``action`` to one of ``user``'s groups (a queryset, not evaluated)."""
    from wfapp.models import WorkflowAccess

    grants = Q()
    for column in _GRANTS[action]:
        grants |= Q(**{column: True})
    return WorkflowAccess.objects.filter(grants, group__user=user)


def limited_to(user: Any) -> frozenset[str] | None:
    """The only workflows ``user`` reaches through this request (an API token's), or None: all."""
    names = getattr(user, "wfapp_workflows", None)
    return frozenset(names) if names is not None else None


def workflow_filter(user: Any, action: Action, field: str = "workflow") -> Q:
    """A filter keeping the rows (their workflow name in ``field``) whose workflow ``user`` may
    ``action``: the workflows without rules when the global permission allows, and those a rule
    grants. Subqueries only: applying it adds no query."""
    limit = limited_to(user)
    rows = _workflow_filter(user, action, field)
    return rows if limit is None else rows & Q(**{f"{field}__in": sorted(limit)})


def _workflow_filter(user: Any, action: Action, field: str) -> Q:
    from wfapp.models import WorkflowAccess

    if not _logged_in(user):
        return Q(pk__in=[])
    if user.is_superuser:
        return Q()
    granted = Q(**{f"{field}__in": _granted(user, action).values("workflow")})
    if not _globally(user, action):
        return granted
    return ~Q(**{f"{field}__in": WorkflowAccess.objects.values("workflow")}) | granted


RULES_TTL = 2.0  # seconds a user object (a request's, a socket's) keeps a workflow's rules


def _rules(user: Any, workflow_name: str) -> list[dict[str, Any]]:
    """The workflow's rules, each with ``mine``: whether it is one of ``user``'s groups' (one
    query, kept on the user object for ``RULES_TTL`` seconds: a page asks several actions)."""
    from django.contrib.auth import get_user_model
    from django.db.models import Exists, OuterRef

    from wfapp.models import WorkflowAccess

    now = time.monotonic()
    kept: dict[str, tuple[float, list[dict[str, Any]]]] = getattr(user, "_wfapp_rules", None) or {}
    hit = kept.get(workflow_name)
    if hit is not None and now - hit[0] < RULES_TTL:
        return hit[1]
    membership = get_user_model().groups.through.objects.filter(
        group_id=OuterRef("group_id"), user_id=user.pk
    )
    rules: list[dict[str, Any]] = [
        dict(rule)
        for rule in WorkflowAccess.objects.filter(workflow=workflow_name)
        .annotate(mine=Exists(membership))
        .values("mine", "may_start", "may_answer", "may_view")
    ]
    kept[workflow_name] = (now, rules)
    try:
        user._wfapp_rules = kept
    except AttributeError:
        pass  # a user object that keeps nothing: asked each time
    return rules


def may(user: Any, action: Action, workflow_name: str) -> bool:
    """Whether ``user`` may ``action`` (start, answer, view) the workflow ``workflow_name``."""
    if not _logged_in(user):
        return False
    limit = limited_to(user)
    if limit is not None and workflow_name not in limit:
        return False
    if user.is_superuser:
        return True
    rules = _rules(user, workflow_name)
    if not rules:
        return _globally(user, action)
    return any(rule["mine"] and any(rule[column] for column in _GRANTS[action]) for rule in rules)


def may_answer_some(user: Any) -> bool:
    """Whether ``user`` may answer questions of at least one workflow (the inbox is theirs)."""
    from wfapp.models import WorkflowAccess

    limit = limited_to(user)
    if limit is not None:
        return any(may(user, "answer", name) for name in limit)
    if _has(user, ANSWER_PERMISSION):
        return True
    return _logged_in(user) and bool(
        WorkflowAccess.objects.filter(may_answer=True, group__user=user).exists()
    )


def answer_scope(user: Any) -> Hashable | None:
    """A key equal for users who may answer the same workflows (None: no question at all), so
    that what they see can be counted once for all of them."""
    if not _logged_in(user):
        return None
    limit = limited_to(user)
    if limit is not None:
        names = tuple(sorted(name for name in limit if may(user, "answer", name)))
        return ("only", names) if names else None
    if user.is_superuser:
        return "all"
    granted = tuple(sorted(set(_granted(user, "answer").values_list("workflow", flat=True))))
    everywhere = _has(user, ANSWER_PERMISSION)
    return (everywhere, granted) if everywhere or granted else None


def users_who_may(action: Action, workflow_name: str) -> Any:
    """The active users who may ``action`` the workflow ``workflow_name`` (a ``User`` queryset):
    the same decision as ``may``, for everyone at once (notifications' recipients)."""
    from django.contrib.auth import get_user_model

    from wfapp.models import WorkflowAccess

    users = get_user_model().objects.filter(is_active=True)
    everyone = Q(is_superuser=True)
    if WorkflowAccess.objects.filter(workflow=workflow_name).exists():
        grants = Q()
        for column in _GRANTS[action]:
            grants |= Q(**{column: True})
        groups = WorkflowAccess.objects.filter(grants, workflow=workflow_name).values("group")
        return users.filter(everyone | Q(groups__in=groups)).distinct()
    permission = _GLOBAL[action]
    if permission is None:
        return users
    app_label, codename = permission.split(".")
    held = Q(user_permissions__codename=codename, user_permissions__content_type__app_label=app_label)
    via_group = Q(
        groups__permissions__codename=codename, groups__permissions__content_type__app_label=app_label
    )
    return users.filter(everyone | held | via_group).distinct()


def can_start(user: Any, workflow_name: str) -> bool:
    """Whether ``user`` may start runs of ``workflow_name``."""
    return may(user, "start", workflow_name)


def can_answer(user: Any, workflow_name: str | None = None) -> bool:
    """Whether ``user`` may answer the questions of ``workflow_name`` (None: of some workflow)."""
    if workflow_name is None:
        return may_answer_some(user)
    return may(user, "answer", workflow_name)


def can_view(user: Any, workflow_name: str) -> bool:
    """Whether ``user`` may see the runs of ``workflow_name`` (else they do not exist for them)."""
    return may(user, "view", workflow_name)


# -- issue 17: assignees, claims and quorums decide who answers one question ----------------------


def answer_refusal(user: Any, interrupt: Any) -> str | None:
    """Why ``user``, who may answer questions, may not answer ``interrupt`` (None: they may)."""
    from wfapp.human.assignment import refusal

    return refusal(user, interrupt)


def can_reassign(user: Any) -> bool:
    """Whether ``user`` may hand questions held by or assigned to others to someone else."""
    return _has(user, REASSIGN_PERMISSION)


# -------------------------------------------------------------------------------------------------


def can_cancel(user: Any, session: Any) -> bool:
    """Whether ``user`` may cancel the run ``session`` (a ``Session``; None: some run)."""
    return _has(user, CANCEL_PERMISSION) and (session is None or can_view(user, session.workflow))


def can_retry(user: Any, session: Any) -> bool:
    """Whether ``user`` may retry the failed run ``session`` (a ``Session``; None: some run)."""
    return _has(user, RETRY_PERMISSION) and (session is None or can_view(user, session.workflow))


def can_check_replays(user: Any, workflow_name: str) -> bool:
    """Whether ``user`` may see whether the open runs of ``workflow_name`` replay on this code:
    those who may retry its runs (deploying is done from the command line, which checks all)."""
    return _has(user, RETRY_PERMISSION) and can_view(user, workflow_name)


def edit_refusal(user: Any, session: Any) -> str | None:
    """Why ``user`` may not retry a failed node of the run ``session`` with an edited input (None:
    they may). An edited input can stand in for what people decided, so it needs its own
    permission, and the run's requester may never give one (they would decide their own request)."""
    who = str(user.get_username()) if _logged_in(user) else "An anonymous user"
    if not can_retry(user, session):
        return f"{who} may not retry runs"
    if not _has(user, EDIT_RETRY_PERMISSION):
        return f"{who} may not retry with an edited input (it needs {EDIT_RETRY_PERMISSION})"
    if session is not None and session.created_by_id is not None and session.created_by_id == user.pk:
        return f"{who} requested this run: its requester may not retry it with an edited input"
    return None


def check_start(user: Any, workflow_name: str) -> None:
    """Raise ``NotPermitted`` unless ``user`` may start runs of ``workflow_name``."""
    require(can_start(user, workflow_name), user, f"start runs of {workflow_name!r}")


def require(allowed: bool, user: Any, action: str) -> None:
    """Raise ``NotPermitted`` saying who may not do ``action`` unless ``allowed``."""
    if not allowed:
        who = str(user.get_username()) if getattr(user, "is_authenticated", False) else "An anonymous user"
        raise NotPermitted(f"{who} may not {action}")
