"""The browser tools (L0 tabs and metadata, L1 the page executor, L2 the debugger bridge), from
a resolved tool call to extension requests, with tab routing, per-tab serialisation, the host-side
ref maps, the post-write snapshot diff, manual takeover and the page indicator. Entry points:
`service.BrowserTools` (the router service), `gateway.BrowserGateway` (the state its runners
share) and, for the control socket, `control_methods.register`. See README.md."""
