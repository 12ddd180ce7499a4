"""The scaled mode: runs executed by ``manage.py wf worker`` processes on procrastinate jobs.

With ``WFAPP_RUNTIME=workers`` every write that needs a run advanced (a start, an answer, a
retry) defers an "advance run R" job in its own transaction (``wfapp.runs.dispatch``); worker processes
execute those jobs under the run's lease (``tasks``), and a periodic sweep takes up what a dead
worker left behind (``sweep``). ``process`` runs one worker process, ``wait`` lets the CLI wait
for the workers, ``health`` answers probes and ``wf workers``; ``schedule`` holds the periodic
jobs' crons and ``handback`` the runs cut at shutdown.

May import: ``wfapp.notify``, ``wfapp.runs`` and below.
"""
