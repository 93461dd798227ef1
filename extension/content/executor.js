// Tabwarden page executor, last part: the message protocol with the service worker
// (`tabwarden/content-v1`). Requests run one at a time per document, each under its deadline;
// a cancel aborts exactly the request it names. Injected after every other part.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("executor")) return;
  TW.parts.add("executor");

  const TOOLS = { ...TW.reads, ...TW.actions };
  const WRITES = new Set(Object.keys(TW.actions));
  const running = new Map(); // requestId -> request
  let queue = Promise.resolve();

  function failureOf(err, request) {
    let failure;
    if (err instanceof TW.ActionFailure) {
      failure = err.toWire();
    } else {
      failure = { code: "unknown", message: `page executor error: ${String((err && err.message) || err)}`, phase: "execute", retryable: false };
    }
    if (request) {
      if (request.timedOut && failure.code === "aborted") {
        failure.code = "timeout";
        failure.message = `the ${request.tool} request ran past its deadline`;
        failure.retryable = !request.dispatched;
      }
      const details = { ...(failure.details || {}) };
      details.dispatched = details.dispatched ?? !!request.dispatched;
      if (request.write && request.dispatched) details.effectMayHaveOccurred = true;
      failure.details = details;
    }
    return { ok: false, requestId: request ? request.requestId : undefined, error: failure.message, failure };
  }

  async function run(request) {
    if (request.controller.signal.aborted) throw TW.abortedFailure();
    const timer = setTimeout(() => {
      request.timedOut = true;
      request.controller.abort();
    }, Math.max(0, request.deadlineAt - Date.now()));
    TW.state.activeRequests += 1;
    try {
      return await TOOLS[request.tool](request.params, request);
    } finally {
      clearTimeout(timer);
      TW.state.activeRequests -= 1;
    }
  }

  function execute(message, sendResponse) {
    const { requestId, tool, params, deadlineAt } = message;
    if (!TW.knownTool(tool)) {
      sendResponse(failureOf(TW.fail("unsupported", `unknown content tool ${JSON.stringify(tool)}`, "precheck", false), { requestId }));
      return false;
    }
    if (!Number.isInteger(deadlineAt) || deadlineAt < 0) {
      sendResponse(failureOf(TW.fail("invalid_params", "deadlineAt must be a non-negative integer", "precheck", false), { requestId }));
      return false;
    }
    try {
      TW.checkParams(tool, params);
    } catch (err) {
      sendResponse(failureOf(err, { requestId, tool }));
      return false;
    }
    const controller = new AbortController();
    const request = { requestId, tool, params, deadlineAt, controller, signal: controller.signal, write: WRITES.has(tool), dispatched: false, timedOut: false };
    running.set(requestId, request);
    const outcome = queue.then(() => run(request));
    queue = outcome.catch(() => {});
    outcome
      .then((result) => sendResponse({ ok: true, requestId, result }), (err) => sendResponse(failureOf(err, request)))
      .finally(() => running.delete(requestId));
    return true;
  }

  chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
    if (!message || message.protocol !== TW.PROTOCOL || sender.id !== chrome.runtime.id || sender.tab) return false;
    const requestId = message.requestId;
    if (typeof requestId !== "string" || !requestId || requestId.length > 64) {
      sendResponse({ ok: false, error: "requestId must be a non-empty string", failure: { code: "invalid_message", message: "requestId must be a non-empty string", phase: "precheck", retryable: false } });
      return false;
    }
    switch (message.kind) {
      case "ping":
        sendResponse({ ok: true, requestId, result: "pong" });
        return false;
      case "cancel": {
        const target = running.get(message.cancelRequestId);
        if (target) target.controller.abort();
        sendResponse({ ok: true, requestId, result: "cancelled" });
        return false;
      }
      case "execute":
        return execute(message, sendResponse);
      default:
        sendResponse({ ok: false, requestId, error: `unknown kind ${JSON.stringify(message.kind)}`, failure: { code: "invalid_message", message: `unknown kind ${JSON.stringify(message.kind)}`, phase: "precheck", retryable: false } });
        return false;
    }
  });
})();
