"""The whole suite runs offline: pydantic-ai refuses any model request but its test models' (ALLOW_MODEL_REQUESTS)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic_ai import models


@pytest.fixture(autouse=True)
def no_model_requests() -> Iterator[None]:
    with models.override_allow_model_requests(False):
        yield
