"""Decoding a control method's params into its Struct, with the one error every method gives."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from protocol.errors import ErrorCode
from host.control.errors import ControlError

T = TypeVar("T")


def parse_params(kind: type[T], params: dict[str, Any]) -> T:
    """`params` converted to `kind`; a ControlError(invalid_message) naming the bad field otherwise."""
    try:
        return msgspec.convert(params, kind)
    except msgspec.ValidationError as exc:
        raise ControlError(ErrorCode.INVALID_MESSAGE, f"invalid params: {exc}") from None
