"""Command-line entry points; each sub-command lives in its own module, imported on demand."""
