"""A live run-page update that carries the run's end renders the ended run, even when the end
commits while the update is being read."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User

from tests.web.conftest import _advance
from wfapp.models import Interrupt, Session
from wfapp.runs import answering
from wfapp.web import presenter, queries


def test_an_update_that_ends_the_run_shows_it_ended(
    operator: User, start_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = start_run()  # waits for the manager's and finance's approvals
    seen = Session.objects.get(pk=run).last_seq
    asks = list(Interrupt.objects.filter(session_id=run).values_list("interrupt_id", flat=True))
    read_events = queries.events_after

    def events_after_the_run_ended(session_id: str, after: int) -> Any:
        # The approvals and the rest of the run commit just as the page's update reads the log.
        for interrupt_id in asks:
            async_to_sync(answering.answer_interrupt)(
                run, interrupt_id, {"approved": True, "comment": "ok"}, user=operator, advance=False
            )
        async_to_sync(_advance)(run, "expense_approval")
        monkeypatch.setattr(queries, "events_after", read_events)
        return read_events(session_id, after)

    monkeypatch.setattr(queries, "events_after", events_after_the_run_ended)
    update = presenter.run_update(run, operator, seen)
    assert Session.objects.get(pk=run).status == "completed"
    assert 'class="status completed"' in update.html
