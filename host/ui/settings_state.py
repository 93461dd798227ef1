"""What the settings page shows, read from the gatekeeper and the provider settings: rules with
their provenance, the origin lists (built-ins included), the default policy, the tools a rule can
name, the providers (never their keys) and, for one thread, its scope lock and accepted origins.

Each part is read on its own: an invalid engine.json still lets the page show the rules, and an
unavailable gatekeeper still lets it show the providers; what could not be read is listed in
`problems`. Every page gets it again after each change (`broadcast_settings`).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from protocol import ui
from protocol.permissions import DEFAULT_POLICY

from host.ui.settings_files import layers

log = logging.getLogger("tabwarden.engine")


def scope_lock(gatekeeper: Any, thread_id: str) -> Any:
    """A thread's scope lock (an OriginSet) or None: the lock the gatekeeper's checks use."""
    return gatekeeper.scope_lock(thread_id)


def tools() -> list[ui.ToolEntry]:
    """Every catalogued tool a rule can name."""
    from host.tools.catalog import CATALOG

    return [ui.ToolEntry(name=s.name, label=s.label, level=s.level, effects=s.effects, category=s.category)
            for s in CATALOG.values()]


def _origin_entries(builtin: tuple[str, ...], in_force: tuple[str, ...] | list[str], from_files: set[str],
                    from_plugins: dict[str, str]) -> list[ui.OriginEntry]:
    entries = [ui.OriginEntry(pattern=p, origin="builtin", removable=False) for p in builtin]
    # Plugins' entries come last in force, so a pattern the user also added shows twice: the
    # user's (removable) and the plugin's (it leaves with the plugin).
    total, seen = Counter(in_force), Counter()
    for pattern in in_force:
        seen[pattern] += 1
        if pattern in from_files:
            entries.append(ui.OriginEntry(pattern=pattern, origin="file", removable=False))
        elif pattern in from_plugins and seen[pattern] == total[pattern]:
            entries.append(ui.OriginEntry(pattern=pattern, origin="plugin", removable=False,
                                          plugin=from_plugins[pattern]))
        else:
            entries.append(ui.OriginEntry(pattern=pattern, origin="user", removable=True))
    return entries


def _plugin_patterns(engine: Any, key: str) -> dict[str, str]:
    """The `blocked` or `guarded` patterns installed plugins add, with the plugin of each."""
    service = engine.tools.services.get("skills")
    plugins = getattr(service, "plugins", None)
    if plugins is None:
        return {}
    return {pattern: row.name for row in plugins.storage.plugins() for pattern in row.manifest.get(key, [])}


def _permissions(engine: Any, state: dict[str, Any], problems: list[str]) -> None:
    from host.gatekeeper.errors import GatekeeperUnavailable
    from host.gatekeeper.sensitive import BUILTIN_BLOCKED, BUILTIN_GUARDED

    try:
        active = engine.gatekeeper.active_permissions()
    except GatekeeperUnavailable as exc:
        problems.append(str(exc))
        return
    files = layers(active.loaded_sources)
    managed_policy = files.managed.policy if files.managed is not None else None
    state["default_policy"] = active.policy
    state["policy_locked_by"] = files.managed.label if managed_policy is not None and files.managed else None
    state["rules"] = [
        ui.RuleEntry(id=v.rule.id, tool=v.rule.tool, origin=v.rule.origin, verdict=v.rule.verdict,
                     source=v.rule.source, provenance=v.provenance, removable=v.removable, args=v.rule.args,
                     created_at=v.rule.created_at, source_thread_id=v.rule.source_thread_id)
        for v in active.rules]
    file_blocked = {p for layer in (files.user, files.managed) if layer for p in layer.sensitive_origins}
    file_guarded = {p for layer in (files.user, files.managed) if layer for p in layer.guarded_origins}
    state["blocked"] = _origin_entries(BUILTIN_BLOCKED, active.sensitive_origins, file_blocked,
                                       _plugin_patterns(engine, "blocked"))
    state["guarded"] = _origin_entries(BUILTIN_GUARDED, active.guarded_origins, file_guarded,
                                       _plugin_patterns(engine, "guarded"))
    state["loaded_sources"] = list(active.loaded_sources)
    state["revision"] = active.revision
    problems.extend(str(w) for w in engine.gatekeeper.load_warnings)  # rules that name no tool


def _providers(engine: Any, state: dict[str, Any], problems: list[str]) -> None:
    from host.config_files import ConfigFileError

    try:
        config = engine.providers.settings()
    except ConfigFileError as exc:
        problems.append(f"engine settings: {exc}. Fix that field in the file: it is read again at each message, "
                        "and the providers show here once it is valid")
        return
    try:
        keys = engine.providers.key_store()
    except Exception as exc:  # SecretError: show the providers, say the keys cannot be checked
        problems.append(f"the key store cannot be read: {exc}")
        keys = None
    chosen = config.provider()
    entries = []
    for name, provider in sorted(config.providers.items()):
        key = "none"
        try:
            if keys is not None and keys.get(name):
                key = "stored"
            elif provider.api_key_env:
                key = "env"
        except Exception:
            log.debug("key lookup failed for %s", name, exc_info=True)
        left_out = [ui.LeftOutTool(name=item.name, reason=item.reason) for item in engine.providers.left_out(name)]
        entries.append(ui.ProviderEntry(name=name, kind=provider.kind, base_url=provider.base_url, model=provider.model,
                                        is_default=chosen is not None and chosen[0] == name, key=key,  # type: ignore[arg-type]
                                        left_out=left_out))
    state["providers"] = entries
    state["default_provider"] = chosen[0] if chosen is not None else None
    state["user_details"] = list(config.user_details)


def _thread(engine: Any, thread_id: str, problems: list[str]) -> ui.ThreadScope | None:
    from host.gatekeeper.errors import GatekeeperUnavailable

    if not engine.store.has_thread(thread_id):
        return None
    gatekeeper = engine.gatekeeper
    try:
        lock = scope_lock(gatekeeper, thread_id)
        return ui.ThreadScope(thread_id=thread_id, lock=[p.text for p in lock.patterns] if lock is not None else None,
                              accepted_origins=sorted(gatekeeper.scope_origins(thread_id)),
                              policy=gatekeeper.effective_policy(thread_id))
    except GatekeeperUnavailable as exc:
        problems.append(str(exc))
        return None


def snapshot(engine: Any, thread_id: str | None = None) -> ui.SettingsSnapshot:
    """The settings page's state (for `thread_id`'s scope when given)."""
    problems: list[str] = []
    state: dict[str, Any] = {"default_policy": DEFAULT_POLICY}
    _permissions(engine, state, problems)
    _providers(engine, state, problems)
    thread = _thread(engine, thread_id, problems) if thread_id else None
    return ui.SettingsSnapshot(**state, tools=tools(), thread=thread, problems=problems)


def broadcast_settings(engine: Any) -> None:
    """Send every page the settings as they are now (after a page's, the REPL's or the control
    socket's change)."""
    engine.bus.broadcast(ui.SettingsState(state=snapshot(engine)))
