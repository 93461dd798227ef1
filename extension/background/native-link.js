// The one native-messaging port to the Tabwarden host: hello, reconnect with backoff,
// chunk reassembly, request dispatch with cancellation, and replies. It decides nothing:
// every request comes from the host, which already ran the gatekeeper.
import { HOST_NAME, PROTOCOL_NAME, PROTOCOL_VERSION, SCHEMA_HASH } from "../generated/protocol.js";
import { ChunkAssembler, splitForHost } from "./chunks.js";
import { CODES, errorInfo, failure } from "./failures.js";
import { getBrowserSessionId } from "./browser-session.js";
import { validateHostMessage } from "./validate.js";

const REQUEST_TYPES = new Set(["content.call", "browser.call", "cdp.command", "cdp.batch", "diag.call", "guard.install"]);
const BACKOFF_MS = [250, 500, 1000, 2000, 5000, 10000, 30000];

export class NativeLink {
  constructor({ handlers, onUiEvent, onStateChange }) {
    this.handlers = handlers; // type -> async (message, signal) => value
    this.onUiEvent = onUiEvent;
    this.onStateChange = onStateChange || (() => {});
    this.port = null;
    this.ready = false;
    this.fatal = null;
    this.attempt = 0;
    this.inflight = new Map(); // request id -> { controller, answered }
    this.assembler = new ChunkAssembler();
    this.chunkIds = 1;
    this.lastError = null;
    this.reconnectTimer = null;
  }

  start() {
    if (this.port || this.fatal) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    let port;
    try {
      port = chrome.runtime.connectNative(HOST_NAME);
    } catch (err) {
      this.lastError = String(err && err.message || err);
      this.scheduleReconnect();
      return;
    }
    this.port = port;
    this.assembler = new ChunkAssembler();
    port.onMessage.addListener((message) => this.receive(message));
    port.onDisconnect.addListener(() => this.disconnected(chrome.runtime.lastError && chrome.runtime.lastError.message));
    this.sendHello();
  }

  async sendHello() {
    const hello = {
      type: "hello",
      protocol: PROTOCOL_NAME,
      protocolVersion: PROTOCOL_VERSION,
      schemaHash: SCHEMA_HASH,
      extensionVersion: chrome.runtime.getManifest().version,
      browserSessionId: await getBrowserSessionId(),
      browser: navigator.userAgent.slice(0, 4000),
    };
    this.post(hello);
  }

  state() {
    return { connected: !!this.port, ready: this.ready, fatal: this.fatal, lastError: this.lastError, attempt: this.attempt };
  }

  disconnected(reason) {
    this.port = null;
    this.ready = false;
    this.lastError = reason || "disconnected";
    for (const entry of this.inflight.values()) entry.controller.abort();
    this.inflight.clear();
    console.warn("Tabwarden host link closed:", this.lastError);
    this.onStateChange(this.state());
    this.scheduleReconnect();
  }

  scheduleReconnect() {
    if (this.fatal || this.reconnectTimer) return;
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.start();
    }, delay);
  }

  receive(raw) {
    let message;
    try {
      message = raw && raw.type === "chunk" ? this.assembler.absorb(validateHostMessage(raw)) : raw;
      if (message === null) return;
      validateHostMessage(message);
    } catch (err) {
      const id = raw && Number.isInteger(raw.id) ? raw.id : undefined;
      this.post({ type: "protocol_error", error: errorInfo(err), ...(id !== undefined ? { requestId: id } : {}) });
      return;
    }
    switch (message.type) {
      case "welcome":
        this.ready = true;
        this.attempt = 0;
        this.lastError = null;
        this.onStateChange(this.state());
        return;
      case "fatal":
        this.fatal = message.error;
        console.error("Tabwarden host refused this extension:", message.error.message);
        this.onStateChange(this.state());
        if (this.port) this.port.disconnect();
        this.port = null;
        return;
      case "ping":
        this.post({ type: "pong", id: message.id });
        return;
      case "pong":
      case "protocol_error":
        if (message.type === "protocol_error") console.warn("host reported a protocol error:", message.error);
        return;
      case "cancel":
        this.cancel(message.id);
        return;
      case "ui.event":
        this.onUiEvent(message.clientId, message.event);
        return;
      default:
        if (REQUEST_TYPES.has(message.type)) this.dispatch(message);
    }
  }

  dispatch(message) {
    const handler = this.handlers[message.type];
    const entry = { controller: new AbortController(), answered: false };
    this.inflight.set(message.id, entry);
    const run = handler
      ? Promise.resolve().then(() => handler(message, entry.controller.signal))
      : Promise.reject(failure(CODES.UNSUPPORTED, `${message.type} is not supported by this extension`));
    run.then(
      (value) => this.answer(message.id, { type: "result", id: message.id, value: value === undefined ? null : value }),
      (err) => this.answer(message.id, { type: "failure", id: message.id, error: errorInfo(err) }),
    );
  }

  answer(id, reply) {
    const entry = this.inflight.get(id);
    if (!entry || entry.answered) return;
    entry.answered = true;
    this.inflight.delete(id);
    this.post(reply);
  }

  cancel(id) {
    const entry = this.inflight.get(id);
    if (!entry) return;
    entry.controller.abort();
    this.answer(id, { type: "failure", id, error: errorInfo(failure(CODES.CANCELLED, "cancelled by the host")) });
  }

  // Events and replies to the host; silently dropped while disconnected (the host has
  // already failed every request of a closed link).
  post(message) {
    if (!this.port) return false;
    try {
      for (const piece of splitForHost(message, () => this.chunkIds++)) this.port.postMessage(piece);
      return true;
    } catch (err) {
      console.error("could not send to the host:", err);
      return false;
    }
  }

  sendEvent(message) {
    return this.ready && this.post(message);
  }
}
