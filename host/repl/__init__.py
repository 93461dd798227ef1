"""The debug REPL: an asyncio Python console with a `tw` client bound to a running host."""
