"""Emulated clusters on one Linux machine: the switch testbed (switch.py) and the routed testbed that follows a
topology (layout.py plans it, routed.py builds it, routed_runs.py runs on it)."""
