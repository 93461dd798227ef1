"""`tabwarden demo`: a scripted agent (a replay model, not an AI) on bundled local pages."""
