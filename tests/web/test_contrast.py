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
PAIRS_TOKENS = {token for pair in PAIRS for token in pair} | {"--approve", "--reject", "--on-decision"}


def schemes() -> dict[str, dict[str, str]]:
    """Each token's light and dark value, as the stylesheet writes them: light-dark(light, dark)."""
    pairs = re.findall(r"(--[\w-]+):\s*light-dark\((#[0-9a-fA-F]{6}),\s*(#[0-9a-fA-F]{6})\)", CSS)
    return {
        "light": {name: light for name, light, _ in pairs},
        "dark": {name: dark for name, _, dark in pairs},
    }


def test_every_colour_token_is_given_once_with_its_light_and_dark_value() -> None:
    defined = re.findall(r"^\s*(--[\w-]+):", CSS, re.M)
    assert len(defined) == len(set(defined))
    assert PAIRS_TOKENS <= set(schemes()["dark"])
    assert "prefers-color-scheme: dark" not in CSS  # the chosen theme and the system's share the tokens


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


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("button", ["--approve", "--reject"])
def test_decision_buttons_contrast(scheme: str, button: str) -> None:
    colours = schemes()[scheme]
    assert contrast(colours["--on-decision"], colours[button]) >= 4.5
