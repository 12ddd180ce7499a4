"""One module per engine; each exposes NAME, PACKAGES, STORES and ``async run(...)-> Sample``."""
