"""Tabwarden native host: transport, engine, gatekeeper, browser gateway, store, CLI."""

__version__ = "0.1.0"
