"""The dashboard's pages and actions; the project's root URLconf includes these at ""."""

from __future__ import annotations

from django.urls import path

from wfapp.web import views_inbox, views_runs, views_workflows

urlpatterns = [
    path("", views_inbox.inbox, name="inbox"),
    path("inbox/bulk/", views_inbox.bulk_answer, name="bulk-answer"),
    path("interrupts/<int:pk>/", views_inbox.interrupt_page, name="interrupt"),
    path("interrupts/<int:pk>/answer/", views_inbox.answer, name="answer"),
    path("workflows/", views_workflows.workflows, name="workflows"),
    path("workflows/<str:name>/", views_workflows.workflow, name="workflow"),
    path("workflows/<str:name>/start/", views_workflows.start, name="workflow-start"),
    path("runs/", views_runs.runs, name="runs"),
    path("runs/<str:session_id>/", views_runs.run, name="run"),
    path("runs/<str:session_id>/events/", views_runs.run_events, name="run-events"),
    path("runs/<str:session_id>/cancel/", views_runs.cancel, name="run-cancel"),
    path("runs/<str:session_id>/retry/", views_runs.retry, name="run-retry"),
]
