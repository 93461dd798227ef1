"""The host's side of the native-messaging link: framing over stdio, request correlation,
timeouts, cancellation, backpressure and the caller-origin check."""
