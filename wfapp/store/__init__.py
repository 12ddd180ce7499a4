"""The store layer: the Django event store and everything that keeps runs on disk.

``events`` (``DjangoEventStore``: the engine's store protocol on the Django models), ``group``
(group commit), ``sql`` and ``inline`` (the append's SQL, the inline SQLite path), ``cache``
(logs and folded replay indexes kept per process), ``lease`` (who executes a run), ``watch``
(other processes' commits), ``doorbell`` (the live pages' wake-ups), ``search_index``, ``rows``
(a run's and a question's rows), ``inbox_rows`` (the inbox row's assignment columns),
``idempotency`` (expiry of the API's records) and ``hooks`` (signals for the layers above).

May import: ``wfapp.models``, ``wfapp.errors``, ``wfapp.registry``, ``engine``. Never a layer above:
what they must hear of (an answer recorded, a decision taken) goes through ``hooks``.
"""
