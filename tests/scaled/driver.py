"""A client process for the scaled-mode tests: starts runs and answers questions, as a web
process would (``python -m tests.scaled.driver start chain 100 '{"pause": 0.1}'``).

It runs with the test's environment (``WFAPP_RUNTIME=workers``), so every start and answer
defers its advance job in its own transaction, exactly as the services do for the pages.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any


async def _start(workflow: str, count: int, node_input: Any) -> list[str]:
    from wfapp.runs import starting

    return [await starting.start_run(workflow, node_input) for _ in range(count)]


async def _answer_pending(username: str) -> list[str]:
    from django.contrib.auth.models import User

    from wfapp.models import Interrupt, InterruptStatus
    from wfapp.runs import answering

    user = await User.objects.aget(username=username)
    answered = []
    async for ask in Interrupt.objects.filter(status=InterruptStatus.PENDING).order_by("pk"):
        await answering.answer_interrupt(ask.session_id, ask.interrupt_id, {"approved": True}, user=user)
        answered.append(ask.session_id)
    return answered


def _start_in_transaction(workflow: str, commit: bool) -> str:
    """Record a run (and so defer its job) in a transaction that commits or rolls back."""
    import uuid

    from django.db import transaction

    from wfapp.registry import get_workflow
    from wfapp.runs import starting

    session_id = uuid.uuid4().hex
    try:
        with transaction.atomic():
            starting._create(get_workflow(workflow), {}, None, None, session_id, advance=True)
            if not commit:
                raise RuntimeError("roll back")
    except RuntimeError:
        pass
    return session_id


def _make_operator(username: str, password: str) -> None:
    from django.contrib.auth.models import Permission, User

    user, _ = User.objects.get_or_create(username=username)
    user.set_password(password)
    user.save()
    user.user_permissions.add(Permission.objects.get(codename="answer_interrupt"))


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wfapp.settings.embedded")
    import django

    django.setup()
    action, *args = argv
    if action == "start":
        node_input = json.loads(args[2]) if len(args) > 2 else {}
        result: Any = asyncio.run(_start(args[0], int(args[1]), node_input))
    elif action == "answer-pending":
        result = asyncio.run(_answer_pending(args[0]))
    elif action == "defer":
        from wfapp.runs.dispatch import defer_advance

        result = defer_advance(args[0])
    elif action == "start-in-transaction":
        result = _start_in_transaction(args[0], args[1] == "commit")
    elif action == "operator":
        _make_operator(args[0], args[1])
        result = args[0]
    else:
        raise SystemExit(f"unknown action {action!r}")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
