"""Plugins: bundles of skills, MCP servers, and rules and list entries that make the gatekeeper stricter, installed and removed whole."""
