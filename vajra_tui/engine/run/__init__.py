"""Turning a request into a run: reading the user's kernels and checking output paths before anything starts."""
