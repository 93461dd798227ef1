"""Decoding a control method's params into its Struct, with the one error every method gives."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from protocol.errors import ErrorCode

T = TypeVar("T")


def parse_params(kind: type[T], params: dict[str, Any]) -> T:
    """`params` converted to `kind`; a ControlError(invalid_message) naming the bad field otherwise."""
    try:
        return msgspec.convert(params, kind)
    except msgspec.ValidationError as exc:
        from host.control.server import ControlError  # the server module is only needed on failure

        raise ControlError(ErrorCode.INVALID_MESSAGE, f"invalid params: {exc}") from None
