"""Timing batches beside their baseline, the statistics of a sample, and the ranking that crowns a winner."""
