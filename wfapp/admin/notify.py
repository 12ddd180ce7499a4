"""Admin: notices, their deliveries and each try (read-only), and users' notification preferences."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from wfapp.admin.base import ModelAdmin, ReadOnlyAdmin, TabularInline
from wfapp.models import AnswerLink, Delivery, DeliveryAttempt, Notice, NotifyPreference


class DeliveryAttemptInline(TabularInline):
    model = DeliveryAttempt
    extra = 0
    can_delete = False
    fields = ("at", "ok", "response_status", "error")
    readonly_fields = fields

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Notice)
class NoticeAdmin(ReadOnlyAdmin):
    list_display = ("key", "kind", "session", "created_at")
    list_filter = ("kind",)
    search_fields = ("key", "session__id")


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = (
        "notice",
        "channel",
        "target",
        "status",
        "attempts",
        "last_error",
        "next_attempt_at",
        "sent_at",
    )
    list_filter = ("status", "channel", "digest")
    search_fields = ("target", "notice__key")
    list_select_related = ("notice",)
    inlines = [DeliveryAttemptInline]


@admin.register(NotifyPreference)
class NotifyPreferenceAdmin(ModelAdmin):
    list_display = ("user", "digest")
    list_filter = ("digest",)


@admin.register(AnswerLink)
class AnswerLinkAdmin(ReadOnlyAdmin):
    list_display = ("interrupt", "recipient", "created_at", "expires_at", "used_at")
    list_select_related = ("interrupt", "recipient")
