// Tabwarden's service worker: a relay between the host (native messaging), the content
// scripts, the extension APIs and our own pages. It holds no authority and no rules.
import { NativeLink } from "./native-link.js";
import { handleDiag } from "./diag.js";
import { callContentWatched } from "./load-executor.js";
import { handleBrowserCall } from "./browser-api.js";
import { broadcastLinkState, deliverUiEvent, installUiPorts } from "./ui-ports.js";
import "./notifications.js"; // approval notifications (registers itself with ui-ports)
import { installBrowserEvents } from "./browser-events.js";
import { indicatorLinkState, installIndicator } from "./indicator-relay.js";
import { handleCdpBatch, handleCdpCommand, installDebugger } from "./debugger.js";
import { installPageScript } from "./page-script.js";
import { installPagePorts, readPortsState } from "./read-ports.js";
import { installGuard, installNavigationGuard, liftGuard } from "./navigation-guard.js";
import { agentIdle, executorAtWork } from "./executor-at-work.js";

const link = new NativeLink({
  handlers: {
    "diag.call": handleDiag,
    "content.call": callContentWatched,
    "browser.call": handleBrowserCall,
    "cdp.command": handleCdpCommand,
    "cdp.batch": handleCdpBatch,
    "guard.install": installGuard,
  },
  onUiEvent: deliverUiEvent,
  onStateChange: (state) => {
    broadcastLinkState(state);
    indicatorLinkState(state);
    if (!state.ready) {
      liftGuard();
      agentIdle();
    }
  },
});

installUiPorts(link);
installBrowserEvents(link);
installIndicator(link);
installPageScript();
installPagePorts();
installDebugger(link);
installNavigationGuard(link);
link.start();

// Exposed for debugging from the worker's DevTools console and for tests.
globalThis.tabwarden = { link, executorAtWork, readPorts: readPortsState };
