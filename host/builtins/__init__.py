"""Built-in tools that run in the host (host-side fetches, downloads, memory, artifacts) as one router
service (`service.BuiltinTools`), with their control methods and settings. See README.md."""
