"""Schema forms rendered: labelled controls, constraints as attributes, inline accessible errors."""

from __future__ import annotations

from html.parser import HTMLParser

from django.template.loader import render_to_string
from django.utils.datastructures import MultiValueDict

from wfapp.schema_forms.form import SchemaForm

EXPENSE_ANSWER = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string", "default": ""}},
    "required": ["approved"],
}
START = {
    "type": "object",
    "properties": {
        "employee": {"type": "string", "minLength": 1, "maxLength": 80},
        "amount": {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string"}]},
        "category": {"enum": ["travel", "equipment", "meals", "other"]},
        "when": {"type": "string", "format": "date"},
        "notes": {"type": "string", "maxLength": 2000},
        "tags": {"type": "array", "items": {"type": "string"}},
        "extra": {"type": "object"},
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "country": {"enum": ["NO", "SE", "DK", "FI", "IS"]}},
            "required": ["city"],
        },
    },
    "required": ["employee", "amount", "category"],
}


class Elements(HTMLParser):
    """Collect start tags with their attributes, and the text of labels and legends."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.labels: dict[str, str] = {}
        self._label_for: str | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "label":
            self._label_for = dict(attrs).get("for")

    def handle_data(self, data: str) -> None:
        if self._label_for:
            self.labels[self._label_for] = self.labels.get(self._label_for, "") + data

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self._label_for = None

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())]

    def by_id(self, element_id: str) -> dict[str, str | None]:
        return next(a for _, a in self.tags if a.get("id") == element_id)


def render(form: SchemaForm, **extra: str) -> str:
    return render_to_string(
        "wfapp/forms/schema_form.html#form", {"form": form, "action": "/answer", "form_id": "f1", **extra}
    )


def test_every_control_is_labelled() -> None:
    page = Elements(render(SchemaForm(START, id_prefix="s-")))
    controls = [a for t, a in page.tags if t in ("input", "select", "textarea") and a.get("type") != "hidden"]
    named = [a for a in controls if a.get("type") not in ("radio", "checkbox") or a.get("id")]
    assert named
    for control in named:
        assert page.labels.get(control["id"], "").strip(), control
    # Radio buttons sit inside their <label>, the group is named by its legend.
    assert len(page.find("input", type="radio", name="f.category")) == 4


def test_constraints_are_html_attributes() -> None:
    page = Elements(render(SchemaForm(START)))
    employee = page.find("input", name="f.employee")[0]
    assert (employee["minlength"], employee["maxlength"]) == ("1", "80")
    assert "required" in employee
    amount = page.find("input", name="f.amount")[0]
    assert (amount["type"], amount["min"], amount["step"]) == ("number", "0", "any")
    assert page.find("input", name="f.when")[0]["type"] == "date"
    assert page.find("textarea", name="f.notes")[0]["maxlength"] == "2000"
    assert page.find("textarea", name="f.tags", **{"class": "lines"})
    assert page.find("textarea", name="f.extra", **{"class": "json"})
    assert page.find("select", name="f.address.country")
    assert page.find("fieldset", **{"data-field": "address"})
    assert page.find("button", type="submit", **{"class": "btn primary"})


def test_errors_are_inline_and_announced_and_typed_values_kept() -> None:
    data = MultiValueDict(
        {"f.employee": ["Ann"], "f.amount": ["-5"], "f.category": ["travel"], "f.tags": ["a\nb"]}
    )
    form = SchemaForm(START, data=data, id_prefix="s-")
    assert not form.is_valid()
    html = render(form)
    page = Elements(html)
    amount = page.find("input", name="f.amount")[0]
    assert amount["value"] == "-5"
    assert amount["aria-invalid"] == "true"
    error_id = amount["aria-describedby"].split()[-1]
    assert page.by_id(error_id) is not None
    assert "Enter a value greater than 0." in html
    assert page.find("input", name="f.employee")[0]["value"] == "Ann"
    assert "checked" in page.find("input", type="radio", value="travel")[0]
    assert "a\nb</textarea>" in html
    assert 'role="alert"' in html


def test_decision_form_submits_with_approve_or_reject() -> None:
    page = Elements(render(SchemaForm(EXPENSE_ANSWER)))
    buttons = page.find("button", type="submit")
    # The first submit button is the hidden default for Enter: it sends no decision.
    assert buttons[0].get("name") is None and buttons[0]["tabindex"] == "-1"
    assert [(b["name"], b["value"]) for b in buttons[1:]] == [
        ("f.approved", "true"),
        ("f.approved", "false"),  # one way to reject: the reason goes in the answer's comment
    ]
    assert not page.find("textarea", name="_reason")  # the comment is the one reason field
    assert not page.find("input", name="f.approved")
    assert page.find("input", name="f.comment")


def test_enter_without_a_decision_asks_only_for_the_decision() -> None:
    html = render(SchemaForm(EXPENSE_ANSWER, data=MultiValueDict({"f.comment": ["fine"]})))
    assert "Choose Approve or Reject." in html
    assert "Please correct the highlighted fields." not in html  # nothing is highlighted
    assert 'value="fine"' in html


def test_submitted_text_is_escaped() -> None:
    data = MultiValueDict({"f.comment": ['"><script>alert(1)</script>']})
    html = render(SchemaForm(EXPENSE_ANSWER, data=data))
    assert "<script>" not in html
    assert "&quot;&gt;&lt;script&gt;" in html
    assert "Choose Approve or Reject." in html


def test_form_targets_itself_for_422_swaps_unless_told() -> None:
    page = Elements(render(SchemaForm(None), hx_target="closest .item"))
    form = page.find("form")[0]
    assert (form["hx-post"], form["hx-target"], form["hx-swap"]) == ("/answer", "closest .item", "outerHTML")
    assert page.find("textarea", name="f", **{"class": "json"})
