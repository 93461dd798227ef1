"""CDP over the debugger bridge (L2).

The host drives the Chrome DevTools Protocol through the extension's `chrome.debugger` bridge,
not a websocket: `transport` carries commands as `cdp.command` frames, `manager.CdpManager`
keeps one state per tab (attachment, lifecycle epoch, flat child sessions, our isolated world)
and `client.TabClient` is the object cdp-use's typed domain library wraps (`send_raw`), with a
per-command timeout, cancellation, fail-fast on detach, and many handlers per event, dispatched
off the receive loop (`events`). Importing this package does not import cdp-use (0.3 s): the
typed library is built on first use.
"""
