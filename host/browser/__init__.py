"""The browser gateway: browser tools (L0 tabs and metadata, L1 page executor) from a tool call
to extension requests, with tab routing, per-tab serialisation, the host-side ref map and the
post-write snapshot diff. Entry points: `gateway.BrowserGateway` and, for the control socket,
`control_methods.register`."""
