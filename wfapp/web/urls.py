"""The dashboard's pages and actions; the project's root URLconf includes these at ""."""

from __future__ import annotations

from django.urls import path

from wfapp.web.views import claims, inbox, links, runs, saved_filters, workflows

urlpatterns = [
    path("", inbox.inbox, name="inbox"),
    path("inbox/bulk/", inbox.bulk_answer, name="bulk-answer"),
    path("interrupts/<int:pk>/", inbox.interrupt_page, name="interrupt"),
    path("interrupts/<int:pk>/answer/", inbox.answer, name="answer"),
    path("answer-link/<str:token>/", links.answer_link, name="answer-link"),
    path("interrupts/<int:pk>/claim/", claims.claim, name="interrupt-claim"),
    path("interrupts/<int:pk>/unclaim/", claims.unclaim, name="interrupt-unclaim"),
    path("interrupts/<int:pk>/reassign/", claims.reassign, name="interrupt-reassign"),
    path("workflows/", workflows.workflows, name="workflows"),
    path("workflows/<str:name>/", workflows.workflow, name="workflow"),
    path("workflows/<str:name>/start/", workflows.start, name="workflow-start"),
    path("runs/", runs.runs, name="runs"),
    path("filters/save/", saved_filters.save, name="filter-save"),
    path("filters/<int:pk>/delete/", saved_filters.delete, name="filter-delete"),
    path("runs/<str:session_id>/", runs.run, name="run"),
    path("runs/<str:session_id>/events/", runs.run_events, name="run-events"),
    path("runs/<str:session_id>/cancel/", runs.cancel, name="run-cancel"),
    path("runs/<str:session_id>/comment/", runs.comment, name="run-comment"),
    path("runs/<str:session_id>/retry/", runs.retry, name="run-retry"),
]
