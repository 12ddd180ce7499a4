"""Agent tests never reach a real model: pydantic-ai refuses any request but its test models'."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic_ai import models


@pytest.fixture(autouse=True)
def no_model_requests() -> Iterator[None]:
    with models.override_allow_model_requests(False):
        yield
