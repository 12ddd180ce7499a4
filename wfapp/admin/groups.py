"""Groups, as Django's admin has them, except that a group a registered workflow assigns its
questions to is neither renamed nor deleted here: every new run asking that question would
fail (``wfapp.human.assignment.assigned_by_workflows`` says which questions)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group
from django.http import HttpRequest

from wfapp.human.assignment import assigned_by_workflows


def _questions(found: list[tuple[str, str]]) -> str:
    return ", ".join(f"{workflow}'s {interrupt_id!r}" for workflow, interrupt_id in found)


class GroupForm(forms.ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = Group
        fields = "__all__"

    def clean_name(self) -> str:
        name = str(self.cleaned_data["name"])
        before = self.instance.name if self.instance.pk else None
        found = assigned_by_workflows(before) if before is not None and name != before else []
        if found:
            raise forms.ValidationError(
                f"Registered workflows assign questions to the group {before!r} ({_questions(found)}): "
                f"renamed, every new run asking them would fail. Create the group {name!r} beside it, "
                "change the workflows to assign to it, then retire this one."
            )
        return name


admin.site.unregister(Group)


@admin.register(Group)
class AssignedGroupAdmin(GroupAdmin):
    form = GroupForm

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """Django's list, with each group a registered workflow assigns questions to among the
        protected objects: the delete page then refuses, saying which questions."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        for group in objs:
            found = assigned_by_workflows(group.name)
            if found:
                protected = [
                    *protected,
                    f"the questions {_questions(found)}, which registered workflows assign to {group.name!r}",
                ]
        return deleted, counts, perms_needed, protected
