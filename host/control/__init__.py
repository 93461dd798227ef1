"""The local control endpoint: how the REPL, `launch` and tests drive a running host."""
