"""A step's ``Event(message=...)`` on the run page's timeline and with its question in the inbox."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from engine import START, Context, Event, RequestInput, Workflow, node
from tests.web.conftest import pending


@node(rerun_on_resume=True)
async def check_refund(ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
    if ctx.resume_inputs:
        yield Event(message="Thanks, <b>refunding</b> now", output=ctx.resume_inputs["refund"])
        return
    yield Event(message="The order arrived damaged <script>x</script>")
    yield Event(message="A refund of 40 EUR is due")
    yield RequestInput(interrupt_id="refund", message="Approve the refund?", response_schema=bool)


chatty = Workflow(name="web_chatty", edges=[(START, check_refund)])


@pytest.fixture
def chatty_run(settings: Any, start_run: Any) -> str:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.test_messages:chatty"]
    run: str = start_run("web_chatty", {"order": 7})
    return run


def test_messages_show_on_the_run_timeline_escaped(operator_client: Client, chatty_run: str) -> None:
    html = operator_client.get(reverse("run", args=[chatty_run])).content.decode()
    assert "<strong>Message</strong>" in html
    assert "The order arrived damaged &lt;script&gt;x&lt;/script&gt;" in html
    assert "A refund of 40 EUR is due" in html
    assert "<script>x</script>" not in html


def test_the_question_card_shows_what_the_step_said_before_asking(
    operator_client: Client, chatty_run: str
) -> None:
    [row] = pending(chatty_run)
    html = operator_client.get(reverse("inbox")).content.decode()
    card = html[html.index(f'id="interrupt-{row.pk}"') :]
    card = card[card.index("<header>") : card.index("</li>")]  # the card, after its list view's line
    assert '<p class="note">The order arrived damaged &lt;script&gt;x&lt;/script&gt;</p>' in card
    assert card.index("A refund of 40 EUR is due") < card.index("Approve the refund?")
    single = operator_client.get(reverse("interrupt", args=[row.pk])).content.decode()
    assert "A refund of 40 EUR is due" in single


def test_a_message_with_an_output_shows_both(operator_client: Client, chatty_run: str, advance: Any) -> None:
    [row] = pending(chatty_run)
    response = operator_client.post(reverse("answer", args=[row.pk]), {"f": "true"}, HTTP_HX_REQUEST="true")
    assert response.status_code in (200, 204), response.content
    advance(chatty_run, "web_chatty")
    html = operator_client.get(reverse("run", args=[chatty_run])).content.decode()
    assert "Message · Output" in html
    assert "Thanks, &lt;b&gt;refunding&lt;/b&gt; now" in html
