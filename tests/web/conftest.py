"""Fixtures for the dashboard: operators with and without the answer permission, real runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group, Permission, User
from django.test import Client

from engine import Runner
from wfapp.demos.expense_approval_people import GROUPS as DEMO_GROUPS
from wfapp.demos.expense_approval_people import ensure_groups
from wfapp.models import Interrupt, InterruptStatus
from wfapp.registry import get_workflow
from wfapp.runs import starting
from wfapp.store.events import DjangoEventStore

OPERATOR_PERMISSIONS = ["answer_interrupt", "start_run", "cancel_run", "retry_run", "retry_with_edited_input"]
BIG_EXPENSE = {"employee": "Ann", "amount": 1500, "category": "travel", "description": "Flights to Oslo"}


def make_user(username: str, *, may_answer: bool) -> User:
    user = User.objects.create_user(username=username, password="pw-" + username)
    if may_answer:  # an operator: answers, starts, cancels and retries
        user.user_permissions.add(
            *Permission.objects.filter(codename__in=OPERATOR_PERMISSIONS, content_type__app_label="wfapp")
        )
        # The expense demo assigns to these. They are recreated after every flush (post_migrate);
        # under xdist on PostgreSQL they were sometimes missing when a module began (its expense
        # runs failed before asking), so an operator's groups are made sure of here.
        ensure_groups()
        user.groups.add(*Group.objects.filter(name__in=DEMO_GROUPS))
    return User.objects.get(pk=user.pk)


@pytest.fixture
def operator(db: None) -> User:
    return make_user("olga", may_answer=True)


@pytest.fixture
def other_operator(db: None) -> User:
    return make_user("piet", may_answer=True)


@pytest.fixture
def viewer(db: None) -> User:
    return make_user("vera", may_answer=False)


def client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def operator_client(operator: User) -> Client:
    return client_for(operator)


@pytest.fixture
def viewer_client(viewer: User) -> Client:
    return client_for(viewer)


async def _start(workflow: str, node_input: Any, user: Any) -> str:
    session_id, _ = await starting.create_run(workflow, node_input, user=user)
    await Runner(get_workflow(workflow), store=DjangoEventStore()).advance(session_id)
    return session_id


async def _advance(session_id: str, workflow: str) -> None:
    await Runner(get_workflow(workflow), store=DjangoEventStore()).advance(session_id)


@pytest.fixture
def start_run(db: None) -> Callable[..., str]:
    """Run a workflow in the test's thread until it waits or ends; return the run id."""

    def start(workflow: str = "expense_approval", node_input: Any = None, user: Any = None) -> str:
        return async_to_sync(_start)(workflow, BIG_EXPENSE if node_input is None else node_input, user)

    return start


@pytest.fixture
def advance(db: None) -> Callable[[str, str], None]:
    def go(session_id: str, workflow: str = "expense_approval") -> None:
        async_to_sync(_advance)(session_id, workflow)

    return go


def pending(session_id: str | None = None) -> list[Interrupt]:
    rows = Interrupt.objects.filter(status=InterruptStatus.PENDING).order_by("pk")
    return list(rows.filter(session_id=session_id) if session_id else rows)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium for one module's browser tests (``test_browser.launched_chromium``)."""
    from tests.web.test_browser import launched_chromium  # playwright only where a browser is used

    with launched_chromium() as launched:
        yield launched
