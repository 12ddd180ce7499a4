"""Forms generated from JSON Schema, shared by the dashboard and the API's error messages.

- `resolve`: reduces `$ref` / `anyOf` shapes to what a form can show.
- `widgets` (with `words` for labels, hints and examples): one widget per schema location.
- `values`: POST data back to typed JSON values; `rows`: the add/remove edits of row editors.
- `errors`: jsonschema errors mapped onto the widgets' fields.
- `form`: `SchemaForm` (render, read back, validate) and `bulk_decision`.
"""
