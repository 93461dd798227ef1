"""The host process: what runs between the browser's stdio pipes and the rest of the host."""
