"""Tools from remote MCP servers (Streamable HTTP), run for the engine and judged by the
gatekeeper like every other tool. See README.md for the settings file and the design.

Nothing here imports the `mcp` SDK at module import time: the SDK is loaded when the first
server is connected, so host start-up stays fast.
"""
