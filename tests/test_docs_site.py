"""The README stays a front door into the documentation site, and the site's sources hold together.

CI builds the site itself (`make docs`: `mkdocs build --strict`); these checks are the fast part,
run with the suite: the README's size and links, the pages' links and navigation, nothing loaded
from another site, and the Python examples moved out of the README still running as written.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"

# Markdown links and images, and HTML src/href attributes.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|\b(?:src|href)=\"([^\"]+)\"")
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", flags=re.DOTALL)


def _relative_targets(page: Path) -> list[str]:
    """Return the relative file links of a Markdown page (no URLs, no in-page anchors)."""
    targets = []
    for match in LINK.finditer(page.read_text()):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def test_the_readme_is_a_front_door_under_250_lines() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines: move the detail into docs/"
    assert "make test" in README.read_text()
    assert "docs/index.md" in README.read_text(), "the README links into the site"


def test_every_relative_link_in_the_readme_points_to_a_file() -> None:
    targets = _relative_targets(README)
    assert targets, "the README links into docs/"
    missing = [target for target in targets if not (ROOT / target).is_file()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


@pytest.mark.parametrize("page", _pages(), ids=lambda page: str(page.relative_to(DOCS)))
def test_every_relative_link_in_a_page_points_to_a_file(page: Path) -> None:
    missing = [target for target in _relative_targets(page) if not (page.parent / target).is_file()]
    assert not missing, f"{page.relative_to(ROOT)} links to files that do not exist: {missing}"


def test_the_navigation_lists_every_page_and_only_pages_that_exist() -> None:
    config = MKDOCS.read_text()
    listed = set(re.findall(r"^\s*- (?:[^:\n]+: )?([\w/.-]+\.md)\s*$", config, flags=re.MULTILINE))
    pages = {str(page.relative_to(DOCS)) for page in _pages()}
    assert listed - pages == set(), "mkdocs.yml lists pages that do not exist"
    assert pages - listed == set(), "pages in docs/ that the navigation leaves out"


def test_the_site_loads_nothing_from_another_site() -> None:
    config = MKDOCS.read_text()
    assert re.search(r"^\s*font: false\b", config, flags=re.MULTILINE), "theme.font: false (no Google Fonts)"
    for key in ("extra_javascript", "extra_css"):
        block = re.search(rf"^{key}:.*?(?=^\S|\Z)", config, flags=re.MULTILINE | re.DOTALL)
        assert block is None or "//" not in block.group(0), f"{key} must name local files only"
    for page in [*_pages(), README]:
        text = page.read_text()
        assert not re.search(r"<(?:script|link|iframe)\b", text), (
            f"{page.name}: no scripts or styles in pages"
        )
        assert not re.search(r"<img[^>]+src=\"(?:https?:)?//", text), f"{page.name}: images are local files"


# The README's own examples run in tests/engine/test_readme.py; these are the ones that moved.
EXAMPLES = [
    (page, index, block)
    for page in _pages()
    for index, block in enumerate(PYTHON_BLOCK.findall(page.read_text()))
    if block not in README.read_text()
]


def test_the_moved_examples_are_found() -> None:
    assert {page.name for page, _, _ in EXAMPLES} >= {"agents.md", "human-steps.md", "versions.md"}


@pytest.mark.parametrize(
    ("page", "index", "block"), EXAMPLES, ids=[f"{page.stem}-{index}" for page, index, _ in EXAMPLES]
)
def test_a_page_example_runs_as_written(page: Path, index: int, block: str, tmp_path: Path) -> None:
    script = tmp_path / f"{page.stem}_{index}.py"
    script.write_text(block)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}


def test_the_count_of_demo_workflows_is_right_wherever_it_is_given() -> None:
    from django.conf import settings

    demos = [path for path in settings.WFAPP_WORKFLOWS if path.startswith("wfapp.demos.")]
    counted = [
        (page.name, word)
        for page in [README, *_pages()]
        for word in re.findall(r"\b(\w+) demo workflows\b", page.read_text(), flags=re.IGNORECASE)
        if word.lower() in COUNTS
    ]
    assert ("README.md", "four") in counted  # the README names the count where it says how to run them
    assert all(COUNTS[word.lower()] == len(demos) for _, word in counted), counted
