"""Real runs: the bench, its result files, calibration, validation against the model, and the testbeds."""
