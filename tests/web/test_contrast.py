"""Every text colour of the stylesheet meets WCAG AA (4.5:1) on its background, light and dark."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = (Path(__file__).resolve().parents[2] / "static" / "wfapp" / "app.css").read_text()

# (foreground, background) pairs as the stylesheet uses them.
PAIRS = [
    ("--text", "--bg"),
    ("--text", "--surface"),
    ("--text", "--surface-2"),
    ("--muted", "--surface"),
    ("--muted", "--bg"),
    ("--muted", "--surface-2"),
    ("--primary", "--surface"),
    ("--primary-text", "--primary"),
    ("--danger-text", "--surface"),
    ("--danger-text", "--danger-bg"),
    ("--warn-text", "--warn-bg"),
    ("--ok-text", "--ok-bg"),
    ("--info-text", "--info-bg"),
    ("--neutral-text", "--neutral-bg"),
]


def tokens(block: str) -> dict[str, str]:
    return dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{6})", block))


def schemes() -> dict[str, dict[str, str]]:
    light = tokens(CSS.split("@media (prefers-color-scheme: dark)")[0])
    dark_block = re.search(r"@media \(prefers-color-scheme: dark\) \{\s*:root \{(.*?)\}", CSS, re.S)
    assert dark_block is not None
    return {"light": light, "dark": {**light, **tokens(dark_block.group(1))}}


def luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("fg", "bg"), PAIRS)
def test_text_contrast(scheme: str, fg: str, bg: str) -> None:
    colours = schemes()[scheme]
    assert contrast(colours[fg], colours[bg]) >= 4.5, (scheme, fg, bg)


@pytest.mark.parametrize(("scheme", "text"), [("light", "#ffffff"), ("dark", "#06110a")])
@pytest.mark.parametrize("button", ["--approve", "--reject"])
def test_decision_buttons_contrast(scheme: str, text: str, button: str) -> None:
    assert contrast(text, schemes()[scheme][button]) >= 4.5
