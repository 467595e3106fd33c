"""The measuring engine. It never imports textual: CLI, TUI and replay share its events."""
