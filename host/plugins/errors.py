"""Why a plugin cannot be reviewed, installed or changed: a stable code and the file or field at
fault (`plugin.json:$.tabwarden.rules[0].verdict`)."""

from __future__ import annotations

from host.skills.errors import SkillError

NOT_A_PLUGIN = "not_a_plugin"  # no manifest at the top of the bundle
INVALID_MANIFEST = "invalid_manifest"
MISSING_FILE = "missing_file"  # the manifest names a file or folder the bundle does not hold
PLUGIN_EXISTS = "plugin_exists"
PLUGIN_NOT_FOUND = "plugin_not_found"
SERVER_EXISTS = "server_exists"  # an MCP server id the user (or another plugin) already configured
REVIEW_NOT_FOUND = "review_not_found"  # the staged copy expired or was never made


class PluginError(SkillError):
    """A plugin problem; the same shape as a skill's (a plugin's skills fail with skill codes)."""
