"""A differential harness: the same scenarios on google-adk 2.13 and on ``engine``.

Nothing here imports ``engine`` or ``google.adk`` at module level: ``adk_side`` runs in
google-adk's own virtualenv (``adk_env``), ``engine_side`` in the project's.
"""
