"""Cluster health: the campaign (stages, groups, rounds) and its plan; launchers run its rounds."""
