"""Admin for API tokens: create one (its text shown once, on a page of its own), revoke, see last use.

Who may create a token for whom is ``wfapp.api.tokens.refusal``: a staff user who is not a
superuser creates tokens for themselves only and sees only their own. Creations and
revocations are written to the action log by ``wfapp.api.tokens`` (with the token's limits), so
the admin's own "added" entry is not written twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from wfapp.api import tokens
from wfapp.api.views_tokens import created_page
from wfapp.errors import NotPermitted
from wfapp.models import ApiToken

if TYPE_CHECKING:
    ModelAdmin = admin.ModelAdmin[ApiToken]
else:
    ModelAdmin = admin.ModelAdmin

_NEW_TOKEN = "_wfapp_new_token"  # the request attribute that carries a new token's text to its page


class NewTokenForm(forms.ModelForm):  # type: ignore[type-arg]
    days = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=tokens.MAX_DAYS,
        label="Expires after (days)",
        help_text="Empty: the token never expires.",
    )
    workflows = forms.CharField(
        required=False, help_text="The workflows it reaches, comma-separated; empty: all the user's."
    )
    creator: Any = None

    class Meta:
        model = ApiToken
        fields = ("user", "name", "read_only")

    def clean_workflows(self) -> list[str]:
        try:
            return tokens.workflow_names(self.cleaned_data.get("workflows", "").split(","))
        except ValueError as unknown:
            raise forms.ValidationError(str(unknown)) from None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        owner = data.get("user")
        refused = tokens.refusal(self.creator, owner) if owner is not None else None
        if refused:
            self.add_error("user", refused)
        return data


@admin.register(ApiToken)
class ApiTokenAdmin(ModelAdmin):
    list_display = (
        "name",
        "user",
        "prefix",
        "created_at",
        "expires_at",
        "read_only",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("revoked_at", "read_only")
    search_fields = ("name", "user__username", "prefix")
    list_select_related = ("user",)
    actions = ["revoke_tokens"]
    readonly_fields = (
        "user",
        "prefix",
        "created_at",
        "expires_at",
        "read_only",
        "workflows",
        "last_used_at",
        "revoked_at",
        "revoked_because",
    )

    def get_queryset(self, request: HttpRequest) -> Any:
        rows = super().get_queryset(request)
        user: Any = request.user  # the admin is for logged-in staff only
        return rows if user.is_superuser else rows.filter(user=user)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is not None:
            return super().get_form(request, obj, change, **kwargs)
        form: Any = super().get_form(request, obj, change, **{**kwargs, "form": NewTokenForm})
        creator: Any = request.user
        form.creator = creator
        owners = get_user_model().objects.filter(is_active=True)
        if not creator.is_superuser:
            owners = owners.filter(pk=creator.pk)
        form.base_fields["user"].queryset = owners
        form.base_fields["days"].initial = tokens.default_days()
        return form

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ("user", "name", "days", "read_only", "workflows")
        return ("name", *self.readonly_fields)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return () if obj is None else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        data = form.cleaned_data
        try:
            record, text = tokens.issue(
                data["user"],
                data["name"],
                by=request.user,
                days=data.get("days"),
                read_only=bool(data.get("read_only")),
                workflows=data.get("workflows") or (),
            )
        except (ValueError, NotPermitted) as refused:
            raise PermissionDenied(str(refused)) from None
        obj.pk = record.pk
        setattr(request, _NEW_TOKEN, (record, text))

    def log_addition(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        return None  # wfapp.api.tokens.issue logged it, with the token's limits

    def response_add(
        self, request: HttpRequest, obj: ApiToken, post_url_continue: Any = None
    ) -> HttpResponse:
        record, text = getattr(request, _NEW_TOKEN)
        context = {**self.admin_site.each_context(request), "opts": self.opts, "title": "New API token"}
        return created_page(request, "admin/wfapp/apitoken/created.html", record, text, **context)

    @admin.action(description="Revoke the selected tokens")
    def revoke_tokens(self, request: HttpRequest, queryset: Any) -> None:
        count = tokens.revoke_rows(queryset, request.user, f"revoked by {request.user}")
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)
