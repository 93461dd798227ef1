// The tabs the user is looking at when they submit: the default tab becomes the turn's target.
// In the side panel that is the active tab of its window; when this page is itself a tab, it is
// the web page the user used last.
const WEB = /^https?:/i;

function tabRef(tab) {
  return { tabId: tab.id, url: (tab.url || "").slice(0, 8192), title: (tab.title || "").slice(0, 1000) };
}

export async function browserContext() {
  let chosen = null;
  try {
    const [active] = await chrome.tabs.query({ active: true, currentWindow: true });
    if (active && WEB.test(active.url || "")) chosen = active;
    if (!chosen) {
      const web = (await chrome.tabs.query({})).filter((tab) => WEB.test(tab.url || ""));
      web.sort((a, b) => (b.lastAccessed || 0) - (a.lastAccessed || 0));
      chosen = web[0] || null;
    }
  } catch (err) {
    console.warn("Tabwarden: cannot read the tabs", err);
  }
  return { capturedAt: Date.now(), ...(chosen ? { defaultTab: tabRef(chosen) } : {}) };
}
