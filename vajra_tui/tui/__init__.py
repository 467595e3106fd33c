"""The Textual app: one screen per pipeline stage, fed by the engine's event stream (live or replayed)."""
