"""What outlives a run on disk: recordings, the results and calibration caches, atomic writes and damage notes."""
