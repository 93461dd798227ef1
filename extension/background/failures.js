// The one failure shape of the worker: code, message, phase, retryable, details, as the host's
// ErrorInfo reads it. Codes come from the generated tables, so only codes the host declares are
// sent (a test checks every use).
import "../generated/tools.js";
import { ERROR_CODES } from "../generated/protocol.js";

// What a tool call can end with (protocol.errors.ToolCode).
export const CODES = globalThis.__tabwardenTools.codes;
// What the link itself refuses: bad frames, chunks, limits (protocol.errors.ErrorCode).
export const PROTOCOL_CODES = ERROR_CODES;

// An Error, so the worker's console shows where it was thrown; `details` only when there are any.
export function failure(code, message, phase = undefined, retryable = false, details = undefined) {
  const err = Object.assign(new Error(message), { code, phase, retryable });
  if (details) err.details = details;
  return err;
}

// The wire form of anything thrown: a failure keeps its fields, anything else is `internal`.
export function errorInfo(err) {
  if (err && typeof err === "object" && typeof err.code === "string") {
    const info = { code: err.code, message: String(err.message || err.code), retryable: !!err.retryable };
    if (err.phase) info.phase = err.phase;
    if (err.details && typeof err.details === "object") info.details = err.details;
    return info;
  }
  return { code: CODES.INTERNAL, message: String((err && err.message) || err), retryable: false };
}
