// Diagnostics the host can ask for: echo, digest (to prove a large payload arrived whole),
// extension info, and a ping through a tab's content script.
import { pingContent } from "./content-relay.js";
import { CODES, failure } from "./failures.js";

export async function handleDiag(message) {
  switch (message.op) {
    case "echo":
      return message.data === undefined ? null : message.data;
    case "digest": {
      const text = typeof message.data === "string" ? message.data : JSON.stringify(message.data ?? null);
      const bytes = new TextEncoder().encode(text);
      const hash = await crypto.subtle.digest("SHA-256", bytes);
      return { length: text.length, bytes: bytes.length, sha256: hex(hash) };
    }
    case "info":
      return { id: chrome.runtime.id, version: chrome.runtime.getManifest().version, userAgent: navigator.userAgent };
    case "content_ping": {
      const tabId = message.data && message.data.tabId;
      if (!Number.isInteger(tabId)) throw failure(CODES.INVALID_MESSAGE, "content_ping needs data.tabId");
      return pingContent(tabId);
    }
    default:
      throw failure(CODES.UNSUPPORTED, `unknown diag op ${message.op}`);
  }
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}
