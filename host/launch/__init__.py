"""`tabwarden launch`: a browser with the unpacked extension in a dedicated profile, its host,
and the REPL attached to it; everything started is stopped again by PID."""
