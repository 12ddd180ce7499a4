"""Admin: runs, their events (read-only), the inbox and the answer audit trail."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.http import HttpRequest

from .models import AnswerAttempt, Event, Interrupt, Session

if TYPE_CHECKING:
    ModelAdmin = admin.ModelAdmin[Any]
    TabularInline = admin.TabularInline[Any, Any]
else:
    ModelAdmin = admin.ModelAdmin
    TabularInline = admin.TabularInline


class ReadOnlyAdmin(ModelAdmin):
    """Records written only by the store: visible, never edited here."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


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
class SessionAdmin(ModelAdmin):
    list_display = ("id", "workflow", "status", "created_by", "created_at", "updated_at", "last_seq")
    list_filter = ("status", "workflow")
    search_fields = ("id", "workflow")
    date_hierarchy = "created_at"
    readonly_fields = (
        "id", "workflow", "input", "output", "error", "created_by", "created_at", "updated_at",
        "lease_owner", "lease_epoch", "lease_expires_at", "last_seq", "settled_seq",
    )
    fields = ("status", *readonly_fields)
    inlines = [InterruptInline]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("session", "seq", "kind", "node_path", "author", "timestamp")
    list_filter = ("kind",)
    search_fields = ("session__id", "node_path", "author")
    list_select_related = ("session",)
    show_full_result_count = False


@admin.register(Interrupt)
class InterruptAdmin(ReadOnlyAdmin):
    list_display = ("interrupt_id", "session", "workflow", "node_path", "status", "answered_by", "created_at")
    list_filter = ("status", "workflow")
    search_fields = ("interrupt_id", "session__id", "message")
    list_select_related = ("session",)


@admin.register(AnswerAttempt)
class AnswerAttemptAdmin(ReadOnlyAdmin):
    list_display = ("session", "interrupt_id", "actor", "outcome", "created_at")
    list_filter = ("outcome",)
    search_fields = ("session__id", "interrupt_id", "actor")
    list_select_related = ("session",)
