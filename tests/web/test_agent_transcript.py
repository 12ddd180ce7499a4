"""The support-triage demo on the dashboard: the approval form and the agent's transcript."""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from tests.web.conftest import pending
from wfapp.models import Session

HX = {"HTTP_HX_REQUEST": "true"}
TICKET = {"customer": "Ada", "order_id": "A100", "message": "My kettle arrived broken."}


def test_the_approval_question_is_a_form_of_the_tool_arguments(operator_client: Client, start_run) -> None:
    run = start_run("support_triage", TICKET)
    assert len(pending(run)) == 1
    html = operator_client.get(reverse("inbox")).content.decode()

    assert "issue_refund" in html
    assert re.search(r'name="f.arguments.amount" type="number" value="39.0"', html)
    assert re.search(r'name="f.arguments.order_id" type="text" value="A100"', html)
    assert 'name="f.approved" value="false"' in html  # reject, with the reason field beside it
    assert 'name="f.reason"' in html


def test_edited_arguments_from_the_form_reach_the_tool_and_the_transcript_shows_it_all(
    operator_client: Client, start_run, advance
) -> None:
    run = start_run("support_triage", TICKET)
    [row] = pending(run)
    form = {
        "f.approved": "true",
        "f.arguments.order_id": "A100",
        "f.arguments.amount": "20",
        "f.arguments.reason": "partly damaged",
    }
    answered = operator_client.post(reverse("answer", args=[row.pk]), form, **HX)
    assert answered.status_code == 200
    advance(run, "support_triage")

    session = Session.objects.get(pk=run)
    assert session.status == "completed"
    assert "Refunded 20.00 on order A100 (partly damaged)." in session.output["reply"]

    html = operator_client.get(reverse("run", args=[run])).content.decode()
    section = html[html.index('id="run-transcripts"') :]
    assert "support_agent" in section
    assert "scripted model" in section  # the demo says which model answered
    assert "The customer is Ada. Look up order A100" in section  # the filled-in instruction
    assert "Calls tool" in section and "lookup_order" in section and "issue_refund" in section
    assert "Answered by olga" in section and "Approved" in section
    assert "&quot;amount&quot;: 20" in section  # the edited arguments
    assert "Refunded 20.00" in section  # the tool's result and the reply
    assert re.search(r"tokens [1-9]\d* in, [1-9]\d* out", section)


def test_a_rejection_reason_reaches_the_model_and_the_transcript(
    operator_client: Client, start_run, advance
) -> None:
    run = start_run("support_triage", TICKET)
    [row] = pending(run)
    form = {"f.approved": "false", "f.reason": "we need a photo <first>"}
    operator_client.post(reverse("answer", args=[row.pk]), form, **HX)
    advance(run, "support_triage")

    session = Session.objects.get(pk=run)
    assert session.output["reply"] == "Sorry, we cannot refund this order. we need a photo <first>"
    html = operator_client.get(reverse("run", args=[run])).content.decode()
    section = html[html.index('id="run-transcripts"') :]
    assert "Rejected" in section and "we need a photo &lt;first&gt;" in section
    assert "<first>" not in section  # autoescaped


def test_a_run_without_agents_has_no_transcript(operator_client: Client, start_run) -> None:
    run = start_run()
    html = operator_client.get(reverse("run", args=[run])).content.decode()
    assert '<div id="run-transcripts" hidden' in html and "transcript-" not in html


def test_live_updates_carry_the_transcript(operator, start_run) -> None:
    from wfapp.web import presenter

    run = start_run("support_triage", TICKET)
    update = presenter.run_update(run, operator, 0)
    assert 'id="run-transcripts" aria-labelledby="transcripts-title" hx-swap-oob="true"' in update.html
    assert "lookup_order" in update.html


def test_a_transfer_shows_who_was_handed_the_conversation(
    operator_client: Client, start_run, settings
) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.flows:transfer"]
    run = start_run("web_transfer", "my invoice")
    assert Session.objects.get(pk=run).status == "completed"

    html = operator_client.get(reverse("run", args=[run])).content.decode()
    section = html[html.index('id="run-transcripts"') :]
    billing = section[section.index('aria-label="Transcript of billing"') :]
    assert "Handed the conversation to desk" in billing
    assert "messages" not in billing  # the recorded transfer, not its raw JSON
    assert "Back at the desk: it was not about money." in section


def test_a_tool_call_is_never_offered_for_bulk_or_approved_by_it(operator_client: Client, start_run) -> None:
    run = start_run("support_triage", TICKET)
    [row] = pending(run)
    html = operator_client.get(reverse("inbox")).content.decode()
    assert f'name="ids" value="{row.pk}"' not in html  # no checkbox: the x and b keys cannot reach it
    response = operator_client.post(
        reverse("bulk-answer"), {"decision": "approve", "ids": [str(row.pk)]}, **HX
    )
    assert "needs the full form" in response.content.decode()
    assert [r.status for r in pending(run)] == ["pending"]
    assert Session.objects.get(pk=run).status == "waiting"
