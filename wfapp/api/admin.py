"""Admin for API tokens: create one for a user (its text shown once), revoke, see last use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.http import HttpRequest
from django.utils import timezone

from . import tokens
from .models import ApiToken

if TYPE_CHECKING:
    ModelAdmin = admin.ModelAdmin[ApiToken]
else:
    ModelAdmin = admin.ModelAdmin


@admin.register(ApiToken)
class ApiTokenAdmin(ModelAdmin):
    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    list_select_related = ("user",)
    actions = ["revoke_tokens"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ("user", "name")
        return ("user", "name", "prefix", "created_at", "last_used_at", "revoked_at")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ()
        return ("user", "prefix", "created_at", "last_used_at", "revoked_at")

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        text = tokens.fill(obj)
        super().save_model(request, obj, form, change)
        self.message_user(
            request,
            f"Token for {obj.user}: {text} (copy it now: it is shown only this once).",
            messages.WARNING,
        )

    @admin.action(description="Revoke the selected tokens")
    def revoke_tokens(self, request: HttpRequest, queryset: Any) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)
