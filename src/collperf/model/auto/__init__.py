"""`-A auto`'s choice: which algorithm to run per size, from the model and a measured calibration, and its confirmation statistics."""
