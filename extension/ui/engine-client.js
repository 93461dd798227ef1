// A page's connection to the engine: a runtime Port to the service worker, which relays to the
// host. The page is a view; everything it shows comes from the host.
//
// Command identity: the page keeps one clientId for its life (sessionStorage, so a reload keeps
// it too) and every op gets a submissionId. Ops wait in an outbox until the host answers them;
// after a reconnect (worker or host restart) the page initializes again and resends what is
// still in the outbox with the same ids, so the host answers a resent op from its receipt
// instead of acting twice.
import { SCHEMA_HASH, UI } from "../generated/protocol.js";

const RECONNECT_MS = 300;
// Answers that say "not delivered": the op stays in the outbox and goes again after initialize.
const UNDELIVERED = new Set(["not_connected", "not_initialized"]);
// A busy host refused the op before acting on it: it goes again, politely later each time.
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 4000;
const RETRY_CODES = new Set(["overloaded", "storage_unavailable"]);

function newId() {
  return crypto.randomUUID();
}

export class EngineClient {
  constructor(name) {
    this.name = name;
    this.storageKey = `tabwarden:${name}`;
    this.clientId = sessionStorage.getItem(`${this.storageKey}:client`) || newId();
    sessionStorage.setItem(`${this.storageKey}:client`, this.clientId);
    this.outbox = new Map(this.loadOutbox()); // submissionId -> op, in send order
    this.waiters = new Map(); // submissionId -> [resolve]
    this.retries = new Map(); // submissionId -> the last wait before resending a refused op
    this.listeners = new Map(); // type -> Set(fn); "*" gets everything
    this.port = null;
    this.link = { ready: false, connected: false };
    this.initialized = false;
    this.initId = null;
    this.subscribeThreadId = null;
  }

  // -- connection ------------------------------------------------------------------------------

  connect() {
    this.port = chrome.runtime.connect({ name: this.name });
    this.port.onMessage.addListener((message) => this.receive(message));
    this.port.onDisconnect.addListener(() => {
      // The worker went away (restart, update): the host forgot this page with it.
      this.port = null;
      this.initialized = false;
      this.setLink({ ready: false, connected: false, lastError: "the extension's background worker restarted" });
      setTimeout(() => this.connect(), RECONNECT_MS);
    });
  }

  setLink(state) {
    this.link = state;
    this.emit("link.state", { type: "link.state", state });
  }

  initialize() {
    this.initId = newId();
    this.post({
      type: "initialize", submissionId: this.initId, protocol: UI.protocol, schemaHash: SCHEMA_HASH,
      clientId: this.clientId, ...(this.subscribeThreadId ? { subscribeThreadId: this.subscribeThreadId } : {}),
    });
  }

  receive(message) {
    if (!message || typeof message !== "object") return;
    if (message.type === "link.state") {
      const wasReady = this.link.ready;
      this.setLink(message.state || {});
      if (!this.link.ready) this.initialized = false;
      // A host that just came up knows nothing of this page: introduce it again.
      if (this.link.ready && (!wasReady || !this.initialized)) this.initialize();
      return;
    }
    if (message.type === "error" && message.submissionId === this.initId && RETRY_CODES.has(message.code)) {
      // The host is up but cannot serve yet (storage being repaired, too busy): ask again later.
      this.emit(message.type, message);
      setTimeout(() => { if (!this.initialized && this.link.ready) this.initialize(); }, RETRY_MAX_MS);
      return;
    }
    if (message.type === "initialized" && message.submissionId === this.initId) {
      this.initialized = true;
      this.emit(message.type, message);
      this.flush();
      return;
    }
    if (typeof message.submissionId === "string" && this.outbox.has(message.submissionId)) {
      if (message.type === "error" && message.code === "overloaded") {
        this.retryLater(message.submissionId);
        return;
      }
      const undelivered = message.type === "error" && UNDELIVERED.has(message.code)
        || message.type === "command.rejected" && message.code === "not_initialized";
      if (!undelivered) this.settle(message.submissionId, message);
    }
    this.emit(message.type, message);
  }

  // -- ops -------------------------------------------------------------------------------------

  // Send an op; resolves with the host's answer (command.ack, command.rejected, a snapshot...).
  send(op) {
    const full = { ...op, submissionId: op.submissionId || newId() };
    this.outbox.set(full.submissionId, full);
    this.saveOutbox();
    const answer = new Promise((resolve) => {
      const list = this.waiters.get(full.submissionId) || [];
      list.push(resolve);
      this.waiters.set(full.submissionId, list);
    });
    if (this.initialized) this.post(full);
    return answer;
  }

  retryLater(submissionId) {
    const wait = Math.min(RETRY_MAX_MS, (this.retries.get(submissionId) || RETRY_FIRST_MS / 2) * 2);
    this.retries.set(submissionId, wait);
    setTimeout(() => {
      const op = this.outbox.get(submissionId);
      if (op && this.initialized) this.post(op);
    }, wait * (0.8 + Math.random() * 0.4));
  }

  pending(submissionId) {
    return this.outbox.has(submissionId);
  }

  flush() {
    for (const op of this.outbox.values()) this.post(op);
  }

  settle(submissionId, message) {
    this.retries.delete(submissionId);
    this.outbox.delete(submissionId);
    this.saveOutbox();
    for (const resolve of this.waiters.get(submissionId) || []) resolve(message);
    this.waiters.delete(submissionId);
  }

  post(message) {
    if (!this.port) return false;
    try {
      this.port.postMessage(message);
      return true;
    } catch (err) {
      console.warn("Tabwarden: could not reach the background worker", err);
      return false;
    }
  }

  loadOutbox() {
    try {
      const saved = JSON.parse(sessionStorage.getItem(`${this.storageKey}:outbox`) || "[]");
      return Array.isArray(saved) ? saved.filter((op) => op && op.submissionId).map((op) => [op.submissionId, op]) : [];
    } catch {
      return [];
    }
  }

  saveOutbox() {
    sessionStorage.setItem(`${this.storageKey}:outbox`, JSON.stringify([...this.outbox.values()]));
  }

  // -- events ----------------------------------------------------------------------------------

  on(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(listener);
  }

  emit(type, message) {
    for (const key of [type, "*"]) {
      for (const listener of this.listeners.get(key) || []) {
        try {
          listener(message);
        } catch (err) {
          console.error("Tabwarden: a view failed on", type, err);
        }
      }
    }
  }
}
