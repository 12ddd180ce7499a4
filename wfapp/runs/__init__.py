"""The runs layer: workflows executed, and the actions people and programs take on them.

``runtime`` (drives the engine in this process, leases, sweeps), ``dispatch`` (have a run
advanced here or by a worker's job), ``mode`` (embedded or workers), ``starting``,
``answering``, ``interventions`` (cancel, retry), ``bulk`` (one decision on many questions),
``answer_links`` (single-use links that answer), ``timers`` (deadlines), ``inputs``,
``versions`` (replay checks), ``failures``, ``reports``, ``checks`` (system checks) and
``startup`` (the runtime from the first ASGI request).

May import: ``wfapp.human``, ``wfapp.store`` and below. The layers above hook in at start-up
(``wfapp.apps``): ``runtime.COMPANIONS`` runs their loops beside the runtime.
"""
