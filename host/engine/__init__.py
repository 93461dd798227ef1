"""The engine: threads, turns and items as an append-only node tree per thread; runs with a
strict state machine; the agent loop (provider stream → gatekeeper → approval → dispatch
re-check → tool → fenced result); approvals that survive restarts; command receipts.

`Engine` (engine.py) is the entry point; `HostServices.engine` builds one per host process.
Heavy dependencies (pydantic, httpx) load only when the first turn needs a provider.
"""
