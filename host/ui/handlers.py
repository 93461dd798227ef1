"""The handler table: op type -> handler(ctx, client, op, fingerprint) returning the op's answer.
The one module that knows every handler; handlers know only `op_context` and `client`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from host.ui import (ops_answers, ops_artifacts, ops_mcp, ops_memory, ops_providers, ops_settings, ops_threads,
                     ops_turns)

HANDLERS: dict[str, Callable[..., Any]] = {
    "thread.create": ops_threads.thread_create,
    "thread.subscribe": ops_threads.thread_subscribe,
    "thread.delete": ops_threads.thread_delete,
    "thread.fork": ops_threads.thread_fork,
    "thread.selectBranch": ops_threads.thread_select_branch,
    "consent.remove": ops_threads.consent_remove,
    "turn.submit": ops_turns.turn_submit,
    "turn.enqueue": ops_turns.turn_enqueue,
    "turn.fork": ops_turns.turn_fork,
    "turn.steer": ops_turns.turn_steer,
    "turn.interrupt": ops_turns.turn_interrupt,
    "queue.update": ops_turns.queue_update,
    "queue.remove": ops_turns.queue_remove,
    "run.resume": ops_turns.run_resume,
    "run.resolveUncertain": ops_turns.run_resolve_uncertain,
    "approval.response": ops_answers.approval_response,
    "interaction.response": ops_answers.interaction_response,
    "settings.get": ops_settings.settings_get,
    "policy.setDefault": ops_settings.policy_set_default,
    "policy.explain": ops_settings.policy_explain,
    "rules.add": ops_settings.rules_add,
    "rules.remove": ops_settings.rules_remove,
    "origins.add": ops_settings.origins_add,
    "origins.remove": ops_settings.origins_remove,
    "scope.setLock": ops_settings.scope_set_lock,
    "audit.query": ops_settings.audit_query,
    "audit.verify": ops_settings.audit_verify,
    "providers.save": ops_providers.providers_save,
    "providers.verify": ops_providers.providers_verify,
    "providers.setDefault": ops_providers.providers_set_default,
    "providers.remove": ops_providers.providers_remove,
    "userDetails.save": ops_providers.user_details_save,
    "memory.list": ops_memory.memory_list,
    "memory.set": ops_memory.memory_set,
    "memory.delete": ops_memory.memory_delete,
    "memory.clear": ops_memory.memory_clear,
    "artifact.download": ops_artifacts.artifact_download,
    "mcp.get": ops_mcp.mcp_get,
    "mcp.saveServer": ops_mcp.mcp_save_server,
    "mcp.removeServer": ops_mcp.mcp_remove_server,
    "mcp.setToken": ops_mcp.mcp_set_token,
    "mcp.refresh": ops_mcp.mcp_refresh,
}
