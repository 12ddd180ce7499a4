"""Admin: runs, their events (read-only), the inbox and the answer audit trail."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest

from wfapp.admin.base import ModelAdmin, ReadOnlyAdmin, TabularInline
from wfapp.human import permissions
from wfapp.models import AnswerAttempt, Event, Interrupt, Session, WorkflowAccess
from wfapp.registry import all_workflows
from wfapp.runs import interventions


class InterruptInline(TabularInline):
    model = Interrupt
    extra = 0
    can_delete = False
    fields = ("interrupt_id", "node_path", "status", "answered_by", "answered_at")
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Session)
class SessionAdmin(ReadOnlyAdmin):
    """Runs change only through their log: cancel and retry go through ``wfapp.runs.interventions``."""

    list_display = ("id", "workflow", "status", "created_by", "created_at", "updated_at", "last_seq")
    list_filter = ("status", "workflow")
    search_fields = ("id", "workflow")
    date_hierarchy = "created_at"
    inlines = [InterruptInline]
    actions = ["cancel_runs", "retry_runs"]

    @admin.action(description="Cancel the selected runs", permissions=["cancel"])
    def cancel_runs(self, request: HttpRequest, queryset: Any) -> None:
        self._apply(request, queryset, interventions.cancel_run, "cancelled")

    @admin.action(description="Retry the selected failed runs", permissions=["retry"])
    def retry_runs(self, request: HttpRequest, queryset: Any) -> None:
        self._apply(request, queryset, interventions.retry_run, "retrying")

    # The actions are offered only to those who may take them (the actions check each run).
    def has_cancel_permission(self, request: HttpRequest) -> bool:
        return permissions.can_cancel(request.user, None)

    def has_retry_permission(self, request: HttpRequest) -> bool:
        return permissions.can_retry(request.user, None)

    def _apply(self, request: HttpRequest, queryset: Any, action: Any, done: str) -> None:
        for session_id in queryset.values_list("pk", flat=True):
            try:
                async_to_sync(action)(session_id, user=request.user)
            except ValueError as refused:
                self.message_user(request, str(refused), messages.WARNING)
            else:
                self.message_user(request, f"Run {session_id}: {done}.", messages.SUCCESS)


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("session", "seq", "kind", "node_path", "author", "timestamp")
    list_filter = ("kind",)
    search_fields = ("session__id", "node_path", "author")
    list_select_related = ("session",)
    show_full_result_count = False


@admin.register(Interrupt)
class InterruptAdmin(ReadOnlyAdmin):
    list_display = (
        "interrupt_id",
        "session",
        "workflow",
        "node_path",
        "status",
        "claimed_by",
        "due_at",
        "answered_by",
        "created_at",
    )
    list_filter = ("status", "workflow")
    search_fields = ("interrupt_id", "session__id", "message", "assignees", "claimed_by")
    list_select_related = ("session",)


@admin.register(AnswerAttempt)
class AnswerAttemptAdmin(ReadOnlyAdmin):
    list_display = ("session", "interrupt_id", "request_seq", "actor", "outcome", "digest", "created_at")
    list_filter = ("outcome",)
    search_fields = ("session__id", "interrupt_id", "actor")
    list_select_related = ("session",)


FIRST_RULE = (
    "A workflow without rules keeps the global permissions. Its first rule restricts it: from then "
    "on only the groups that have a rule on it may start its runs, answer its questions or see its "
    "runs, as their rules say; everyone else (superusers excepted) no longer can."
)


class WorkflowAccessForm(forms.ModelForm):  # type: ignore[type-arg]
    """A rule picks its workflow from the registered ones: a typo would silently restrict nothing."""

    workflow = forms.ChoiceField(
        help_text=FIRST_RULE,
        error_messages={"invalid_choice": "No registered workflow %(value)s: choose one from the list."},
    )

    class Meta:
        model = WorkflowAccess
        fields = ("workflow", "group", "may_start", "may_answer", "may_view")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = list(all_workflows())
        current = self.instance.workflow if self.instance.pk else ""
        if current and current not in names:  # a rule on a workflow no longer registered
            names.append(current)
        field = self.fields["workflow"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", "Choose a workflow"), *[(name, name) for name in names]]

    def clean_workflow(self) -> str:
        name = str(self.cleaned_data["workflow"]).strip()
        known = sorted(all_workflows())
        if name not in known:
            raise forms.ValidationError(f"No registered workflow {name!r}; registered: {', '.join(known)}")
        return name


@admin.register(WorkflowAccess)
class WorkflowAccessAdmin(ModelAdmin):
    """Per-workflow permissions by group: a workflow with no rule keeps the global permissions."""

    form = WorkflowAccessForm
    list_display = ("workflow", "group", "may_start", "may_answer", "may_view")
    list_filter = ("workflow", "group")
    list_select_related = ("group",)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        first = not WorkflowAccess.objects.filter(workflow=obj.workflow).exclude(pk=obj.pk).exists()
        super().save_model(request, obj, form, change)
        if first:
            messages.warning(
                request,
                f"This is the first rule on {obj.workflow}: from now on only members of {obj.group} "
                "(and of the groups given rules later) may use it as their rules say; everyone else "
                "(superusers excepted) can no longer start, answer or see its runs.",
            )
