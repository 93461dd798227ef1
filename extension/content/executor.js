// Tabwarden page executor, last part: its messages from the service worker (`executor.ping`,
// `executor.execute`, `executor.cancel`, declared in protocol/content.py). Requests run one at a
// time per document, each under its deadline; a cancel aborts exactly the request it names.
// Injected after every other part.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("executor")) return;
  TW.parts.add("executor");
  const CODES = TW.codes;

  const CONTENT = globalThis.__tabwardenContent; // injected before every part
  const { TYPES } = CONTENT;
  const OWN_TYPES = new Set([TYPES.EXECUTOR_PING, TYPES.EXECUTOR_EXECUTE, TYPES.EXECUTOR_CANCEL]);
  const TOOLS = { ...TW.reads, ...TW.actions };
  const WRITES = new Set(Object.keys(TW.actions));
  const running = new Map(); // requestId -> request
  const LOAD_LOOK_MS = 100;
  let queue = Promise.resolve();

  function failureOf(err, request) {
    const thrown = err instanceof TW.ActionFailure
      ? err
      : TW.fail(CODES.UNKNOWN, `page executor error: ${String((err && err.message) || err)}`, "execute", false);
    const failure = thrown.toWire();
    if (request) {
      if (request.timedOut && failure.code === CODES.ABORTED) {
        failure.code = CODES.TIMEOUT;
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

  // The worker asked this document for something: the tab is driven, a person's press here is a
  // takeover from now on, in its frames too (the worker arms theirs; frames that load later are
  // reported by the watcher armed here).
  let framesArmed = false;
  function driven() {
    const watch = globalThis.__tabwardenWatch;
    if (watch) watch.arm();
    if (framesArmed || window.frames.length === 0) return;
    framesArmed = true;
    chrome.runtime.sendMessage(CONTENT.message(TYPES.TAKEOVER_FRAME_LOADED, {})).catch(() => {});
  }

  // Resolves in a task after the document's load event has run (at once when it has): a read
  // sent with a load sees the page as loaded, not the part parsed so far. The task is a message
  // to itself, which a hidden tab does not throttle as it does timers. A page may stop the load
  // event before it reaches this listener, so the document's state is looked at too, and the
  // wait ends at the request's deadline whatever happens.
  function afterLoad(deadlineAt) {
    if (document.readyState === "complete") return null;
    return new Promise((resolve) => {
      let over = false;
      const finish = () => {
        if (over) return;
        over = true;
        clearInterval(look);
        window.removeEventListener("load", finish);
        const channel = new MessageChannel();
        channel.port1.onmessage = () => resolve();
        channel.port2.postMessage(null);
      };
      const look = setInterval(() => {
        if (document.readyState === "complete" || Date.now() >= deadlineAt) finish();
      }, LOAD_LOOK_MS);
      window.addEventListener("load", finish, { once: true });
    });
  }

  function execute(message, sendResponse) {
    const { requestId, tool, params, deadlineAt } = message;
    driven();
    if (message.expectUrl && message.expectUrl !== location.href) {
      // Judged for another page than this document: the worker decides whether the tab moved.
      const moved = TW.fail(CODES.TARGET_CHANGED, `this page is at another URL than the one ${tool} was checked for`,
        "dispatch", true, { dispatched: false, documentUrl: location.href });
      sendResponse(failureOf(moved, { requestId, tool }));
      return false;
    }
    if (!TW.knownTool(tool)) {
      sendResponse(failureOf(TW.fail(CODES.UNSUPPORTED, `unknown content tool ${JSON.stringify(tool)}`, "precheck", false), { requestId }));
      return false;
    }
    try {
      TW.checkParams(tool, params);
    } catch (err) {
      sendResponse(failureOf(err, { requestId, tool }));
      return false;
    }
    const shared = sharedLoadRead(message);
    if (shared) {
      shared.then((result) => sendResponse({ ok: true, requestId, result }), (err) => sendResponse(failureOf(err, { requestId, tool })));
      return true;
    }
    start(message).then((result) => sendResponse({ ok: true, requestId, result }), ([err, request]) => sendResponse(failureOf(err, request)));
    return true;
  }

  // Queue one checked request; its outcome rejects with [error, request].
  function start(message) {
    const { requestId, tool, params, deadlineAt } = message;
    const controller = new AbortController();
    const request = { requestId, tool, params, deadlineAt, controller, signal: controller.signal, write: WRITES.has(tool), dispatched: false, timedOut: false };
    running.set(requestId, request);
    const loaded = message.afterLoad ? afterLoad(deadlineAt) : null;
    const outcome = queue.then(() => loaded).then(() => run(request));
    queue = outcome.catch(() => {});
    outcome.finally(() => running.delete(requestId)).catch(() => {});
    return outcome.catch((err) => Promise.reject([err, request]));
  }

  // The read of a load of the agent's, asked for when the document committed (`readAfterLoad`
  // and `onCommit` in the worker): it runs in the task after the load event, and its answer goes to the worker
  // unasked over this document's read port, while the browser is still telling the worker that
  // the load is over. Where the worker asks for that read itself once it hears that (its request
  // has the same id), it shares this one's outcome instead of running again; a failed one runs.
  let loadRead = null; // { requestId, outcome, failed, shared }
  let ownPort = null;
  function readAtLoad(message) {
    if (loadRead || CONTENT.problem(message) || message.tool !== "read_page" || !message.afterLoad || !ownPort) return;
    try {
      TW.checkParams(message.tool, message.params);
    } catch (_) {
      return; // the worker's own read says what is wrong
    }
    const outcome = start(message);
    TW.state.readAtLoad = true;
    const read = (loadRead = { requestId: message.requestId, outcome, failed: false, shared: false });
    outcome.catch(() => { read.failed = true; });
    const port = ownPort;
    try {
      port.postMessage({ requestId: message.requestId, reading: true });
    } catch (_) {
      return; // the port closed: the worker's own read runs instead (and shares this one)
    }
    outcome.then((result) => ({ ok: true, requestId: message.requestId, result }), ([err, request]) => failureOf(err, request))
      .then((reply) => {
        try {
          port.postMessage(reply);
        } catch (_) {
          // the port closed: the worker's own read runs instead
        }
      });
  }
  TW.readAtLoad = readAtLoad;

  // The outcome of the read at load for the worker's read of that load, once: it comes with the
  // same request id (one made for this load alone); null for any other request, or when it failed.
  function sharedLoadRead(message) {
    const read = loadRead;
    if (!read || read.failed || read.shared || message.requestId !== read.requestId) return null;
    read.shared = true;
    return read.outcome.catch(([err]) => Promise.reject(err));
  }

  // A refused message is answered with its request id when that much of it is valid, so the
  // worker reports the refusal instead of a mismatch.
  function refusal(message, problem) {
    const requestId = message && message.requestId;
    const idIsValid = CONTENT.problem({ type: TYPES.EXECUTOR_PING, requestId }) === null;
    const failure = TW.fail(CODES.INVALID_MESSAGE, problem, "precheck", false).toWire();
    return { ok: false, ...(idIsValid ? { requestId } : {}), error: problem, failure };
  }

  chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || sender.tab) return false;
    const type = CONTENT.typeOf(message);
    if (type !== null && !OWN_TYPES.has(type)) return false; // the indicator's
    // Undeclared types are refused here (the indicator ignores them).
    const problem = CONTENT.problem(message);
    if (problem) {
      sendResponse(refusal(message, problem));
      return false;
    }
    const requestId = message.requestId;
    switch (type) {
      case TYPES.EXECUTOR_PING:
        sendResponse({ ok: true, requestId, result: "pong" });
        return false;
      case TYPES.EXECUTOR_CANCEL: {
        const target = running.get(message.cancelRequestId);
        if (target) target.controller.abort();
        sendResponse({ ok: true, requestId, result: "cancelled" });
        return false;
      }
      case TYPES.EXECUTOR_EXECUTE:
        return execute(message, sendResponse);
      default:
        return false;
    }
  });

  // A port for reads (see background/read-ports.js): each message on it is one read, answered on
  // the port as a one-off message would be. A write is refused there, unrun: it must come with its
  // dialog patch, the one-off way.
  function serveReads(port) {
    const answer = (reply) => {
      try {
        port.postMessage(reply);
      } catch (_) {
        // the worker let the port go: nobody waits for this answer
      }
    };
    port.onMessage.addListener((message) => {
      const problem = CONTENT.typeOf(message) === TYPES.EXECUTOR_EXECUTE ? CONTENT.problem(message) : "only executor.execute is taken on this port";
      if (problem) return answer(refusal(message, problem));
      if (WRITES.has(message.tool)) return answer(refusal(message, `${message.tool} is a write: it is not taken on the read port`));
      execute(message, answer);
    });
  }

  // Ports the worker opens...
  chrome.runtime.onConnect.addListener((port) => {
    if (port.name !== CONTENT.READ_PORT) return;
    if (!port.sender || port.sender.id !== chrome.runtime.id || port.sender.tab) {
      port.disconnect();
      return;
    }
    serveReads(port);
  });
  // ...or, in a top frame, one opened from here at once: the first read after the page's load
  // then need not wait for a port the worker opens, which a loading page takes only after its load.
  if (window === window.top) {
    try {
      ownPort = chrome.runtime.connect({ name: CONTENT.READ_PORT });
      serveReads(ownPort);
    } catch (_) {
      // the extension was reloaded: this document's executor is an orphan, the worker opens ports
    }
    // Asked for before this executor was in (the worker asks at the document's commit).
    const asked = globalThis.__tabwardenReadAtLoad;
    delete globalThis.__tabwardenReadAtLoad;
    if (asked) readAtLoad(asked);
  }
})();
