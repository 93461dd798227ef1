// The side panel is a view: it shows what the service worker and the host tell it.
const port = chrome.runtime.connect({ name: "sidepanel" });
const stateLine = document.getElementById("state");
port.onMessage.addListener((event) => {
  if (event && event.type === "link.state") {
    const s = event.state;
    stateLine.textContent = s.fatal ? `The host refused this extension: ${s.fatal.message}`
      : s.ready ? "Connected to the Tabwarden host."
      : `Not connected to the host${s.lastError ? `: ${s.lastError}` : ""}. Run \`tabwarden doctor\`.`;
  }
});
