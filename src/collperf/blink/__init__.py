"""Blink's packed spanning trees (Wang et al., "Blink: Fast and Generic Collectives for Distributed ML", MLSys 2020):
packing, packing on fixed routes, the hybrid split, schedules, micro-benchmark patterns, and what the commands report."""
