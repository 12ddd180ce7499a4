"""Demo workflows, registered by default: deterministic, no LLM."""
