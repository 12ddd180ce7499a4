"""The dashboard's pages and htmx fragments: `inbox`, `workflows`, `runs` (wired in `wfapp.web.urls`)."""
