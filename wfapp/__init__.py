"""wfapp: the Django project and app that runs engine workflows durably."""
