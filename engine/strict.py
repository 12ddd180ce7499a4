"""Public models refuse fields they do not have, naming them, instead of ignoring them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import UnknownFieldError


class StrictModel(BaseModel):
    """A pydantic model whose constructor and ``model_validate`` refuse unknown fields.

    pydantic's ``extra="forbid"`` alone already refuses them; the constructor says so in
    one line that names the field and the fields there are, since a misspelt keyword
    (``Event(mesage=...)``) is the usual way to hit it.
    """

    model_config = ConfigDict(extra="forbid")

    def __init__(self, /, **data: Any) -> None:
        # Validated first and looked at only when refused: a node may build an Event per call.
        try:
            self.__pydantic_validator__.validate_python(data, self_instance=self)
        except ValidationError:
            fields = type(self).model_fields
            unknown = [key for key in data if key not in fields]
            if unknown:
                raise UnknownFieldError(type(self).__name__, unknown, list(fields)) from None
            raise
