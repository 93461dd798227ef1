"""Model providers: streaming adapters for OpenAI-compatible Chat Completions and Anthropic
Messages over httpx, their user-written configuration (pydantic) and the API keys (OS keyring,
else a 0600 file; never in SQLite).

Nothing here is imported at host start-up: the engine loads it on its first turn.
"""
