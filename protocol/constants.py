"""Fixed facts of the native-messaging link: its name and version, and the frame sizes Chrome
allows in each direction (which is why large host messages travel as chunks)."""

PROTOCOL_NAME = "tabwarden/native-v1"
PROTOCOL_VERSION = 1

# The name the extension passes to chrome.runtime.connectNative().
HOST_NAME = "com.tabwarden.host"

# Chrome closes the port when the host sends a frame longer than this.
MAX_HOST_FRAME = 1_048_576
# Chrome refuses to send more than this from the extension to the host.
MAX_BROWSER_FRAME = 64 * 1024 * 1024

# Bytes of a logical message's JSON text carried by one chunk frame. Embedding the slice as
# a JSON string at most doubles it, so with the envelope a chunk frame stays below MAX_HOST_FRAME.
CHUNK_RAW_BYTES = 500_000
# A chunked message may not grow beyond this in either direction.
MAX_CHUNKED_MESSAGE = 64 * 1024 * 1024
# Partially received chunked messages held at once (each bounded by MAX_CHUNKED_MESSAGE in total).
MAX_PARTIAL_MESSAGES = 4
