// Tabwarden: injected after the executor into a document an agent's load committed. The read
// that load asked for, when its request reached this document before the executor did
// (background/load-executor.js), is taken now if the document has loaded; the completion value
// is its answer (or null), which the injection brings back.
(() => {
  const TW = globalThis.__tabwarden;
  const asked = globalThis.__tabwardenReadAtLoad;
  delete globalThis.__tabwardenReadAtLoad;
  return asked && TW && typeof TW.readIfLoaded === "function" ? TW.readIfLoaded(asked) : null;
})();
