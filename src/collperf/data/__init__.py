"""Data shipped with collperf: the corpus of public runs and the calibration computed from it."""
