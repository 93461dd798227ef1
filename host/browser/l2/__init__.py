"""L2 browser tools over the debugger bridge: deep reads of the accessibility tree (across
out-of-process frames and closed shadow roots), deep refs and their invalidation, L1 ref
translation to backend nodes, trusted input, screenshots, waits for the requests an input set off, and the
accessibility-tree fallback for pages L1 reads as empty. Nothing here imports cdp-use at
import time."""
