// A random id for this browser run: kept in chrome.storage.session, so it survives service
// worker restarts and disappears when the browser exits. The host binds session grants to it.
const KEY = "tabwarden_browser_session_id";

export async function getBrowserSessionId() {
  const stored = await chrome.storage.session.get(KEY);
  if (typeof stored[KEY] === "string" && /^[A-Za-z0-9_-]{8,64}$/.test(stored[KEY])) return stored[KEY];
  const id = crypto.randomUUID();
  await chrome.storage.session.set({ [KEY]: id });
  return id;
}
