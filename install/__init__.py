"""Per-OS, per-browser registration of the native host (manifest files, Windows registry)."""
