"""Retry policy for node failures."""

from __future__ import annotations

import random
from typing import Any

from pydantic import ConfigDict, field_validator

from .strict import StrictModel


class RetryConfig(StrictModel):
    """How often and how soon a failed node runs again.

    Every field defaults to ``None``, meaning ADK's default: 5 attempts counting the
    first, 1 s initial delay, 60 s maximum delay, backoff factor 2.0 and jitter 1.0
    (the delay varies by up to ±jitter × delay). ``exceptions`` lists exception classes
    or class names that are retried (matched by name against the exception's MRO); it
    keeps names, as ADK does, and refuses anything else. ``None`` retries every exception.
    """

    model_config = ConfigDict(frozen=True)

    max_attempts: int | None = None
    initial_delay: float | None = None
    max_delay: float | None = None
    backoff_factor: float | None = None
    jitter: float | None = None
    exceptions: list[str] | None = None

    @field_validator("exceptions", mode="before")
    @classmethod
    def _names(cls, given: Any) -> Any:
        if given is None or isinstance(given, str) or not isinstance(given, list | tuple | set):
            return given  # pydantic refuses what is not a list
        names = []
        for item in given:
            if isinstance(item, str):
                names.append(item)
            elif isinstance(item, type) and issubclass(item, BaseException):
                names.append(item.__name__)
            else:
                raise ValueError(
                    "RetryConfig.exceptions holds exception classes or class names, "
                    f"not {type(item).__name__}: {item!r}"
                )
        return names

    @property
    def attempts(self) -> int:
        return 5 if self.max_attempts is None else max(self.max_attempts, 1)

    def retries(self, error: BaseException, attempt: int) -> bool:
        """Say whether a failure on ``attempt`` (1-based) is followed by another attempt."""
        if attempt >= self.attempts:
            return False
        if self.exceptions is None:
            return True
        names = {cls.__name__ for cls in type(error).__mro__}
        return any(wanted in names for wanted in self.exceptions)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed ``attempt`` before the next one."""
        initial = 1.0 if self.initial_delay is None else self.initial_delay
        factor = 2.0 if self.backoff_factor is None else self.backoff_factor
        ceiling = 60.0 if self.max_delay is None else self.max_delay
        jitter = 1.0 if self.jitter is None else self.jitter
        delay = min(initial * factor ** (attempt - 1), ceiling)
        if jitter:
            delay += random.uniform(-jitter, jitter) * delay
        return max(delay, 0.0)
