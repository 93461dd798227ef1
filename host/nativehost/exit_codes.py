"""Exit codes of `tabwarden host`, distinct so a launcher log says what happened."""

OK = 0
USAGE = 2
FORBIDDEN_CALLER = 3
PROTOCOL_MISMATCH = 4
LINK_BROKEN = 5  # the byte stream from the browser could not be trusted any more
INTERNAL = 70
