"""The settings ops' handlers, merged into the engine's handler table (commands.HANDLERS)."""

from __future__ import annotations

from host.ui import ops_providers, ops_settings

HANDLERS = {
    "settings.get": ops_settings.settings_get,
    "policy.setDefault": ops_settings.policy_set_default,
    "policy.explain": ops_settings.policy_explain,
    "rules.add": ops_settings.rules_add,
    "rules.remove": ops_settings.rules_remove,
    "origins.add": ops_settings.origins_add,
    "origins.remove": ops_settings.origins_remove,
    "scope.setLock": ops_settings.scope_set_lock,
    "audit.query": ops_settings.audit_query,
    "providers.save": ops_providers.providers_save,
    "providers.verify": ops_providers.providers_verify,
    "providers.setDefault": ops_providers.providers_set_default,
}
