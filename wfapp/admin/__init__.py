"""The Django admin, the top layer beside ``web`` and ``api``: runs, events, the inbox and the
answer audit (``runs``), API tokens (``tokens``), notifications (``notify``), groups a workflow
assigns questions to kept from renaming and deleting (``groups``), on the shared base classes of
``base``. Django's autodiscovery imports this package, which registers them all.
"""

from django.contrib import admin

from wfapp.admin import groups, notify, runs, tokens

admin.site.site_header = "wfapp administration"
admin.site.site_title = "wfapp administration"
admin.site.index_title = "Users, groups, runs and workflow access"

__all__ = ["groups", "notify", "runs", "tokens"]
