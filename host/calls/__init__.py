"""How a tool call is routed to the service that runs it (`router`) and the one path that
authorises and runs it (`authorize`)."""
