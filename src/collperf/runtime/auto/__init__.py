"""`-A auto` on the ranks: the calibration run, the built-in's fit, the confirmation rounds."""
