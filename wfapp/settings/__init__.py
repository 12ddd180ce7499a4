"""Settings profiles: ``embedded`` (the default, one process) and ``production``."""
