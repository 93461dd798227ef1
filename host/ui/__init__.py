"""The host side of the `protocol.ui` contract: the server for the extension pages' ops (side
panel, settings page) and the control socket's ops. It is a client of the engine: it reads and
changes the engine's state and never the reverse."""
