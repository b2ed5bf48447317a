"""Emulated clusters on one Linux machine, behind one Testbed protocol.

Two testbeds implement it: the switch testbed (switch.py: hosts on one bridge, each host's link shaped to
one rate) and the routed testbed (routed.py: every link of a topology its own shaped point-to-point pair,
hosts forwarding along the topology's routes; layout.py plans it, routed_runs.py runs on it). The bench,
`collperf calibrate` and `collperf validate` ask a testbed for what they need through the protocol and
never ask which kind it is.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from collperf.lab.testbed.routed import TopologyTestbed
from collperf.lab.testbed.routed import parse_fields as _routed_from_fields
from collperf.lab.testbed.switch import Testbed as SwitchTestbed
from collperf.lab.testbed.switch import parse_fields as _switch_from_fields
from collperf.lab.testbed.switch import split_fields


@runtime_checkable
class Testbed(Protocol):
    """What a testbed offers: its hosts and ranks (launch places rank r in namespace host(host_of(r)), bound
    to address(host_of(r))), a life cycle (up/down, a context manager), and the three capabilities the
    commands use: calibrate itself into a profile, predict measured rows from its own model of itself, and
    run the validation grid."""

    name: str
    ranks_per_host: int
    topology: object  # the Topology it follows (its links, routes, devices), None for one switch

    @property
    def ranks(self) -> int: ...

    @property
    def hosts(self) -> int: ...

    def host_of(self, rank: int): ...

    def host(self, h) -> str: ...

    def address(self, h) -> str: ...

    def describe(self) -> str: ...

    def up(self) -> "Testbed": ...

    def down(self) -> list[str]: ...

    def __enter__(self) -> "Testbed": ...

    def __exit__(self, *exc) -> None: ...

    def calibrate(self, timeout_s: float = 300.0, on_link=None) -> dict:
        """On an up testbed: a profile document (model/profile.py) that `--profile` reads."""

    def prebuilt_schedules(self, sweep) -> dict | None:
        """(algorithm, size) -> schedule for what only this testbed can build (packed trees on its routes), or
        None when it builds nothing of its own."""

    def predict_rows(self, results, rows, schedules=None) -> bool:
        """Each row's predicted_us from the testbed's own model of itself; False when it has none (then the
        network given or calibrated predicts)."""

    def check_calibration(self) -> None:
        """Before the testbed comes up: refuse a calibration it cannot do (a UsageError saying why)."""

    def validation_grid(self, sizes, iters: int, timeout_s: float, profile=None, on_step=None) -> tuple[str, list]:
        """On an up testbed: (the network validated on, described; rows with measured and predicted times),
        predicted from `profile` when given (a file) and from the testbed's own calibration otherwise;
        on_step(text) hears of each phase (calibrating, each collective) as it starts."""


def parse_spec(text: str) -> Testbed:
    """'hosts=4,rate=200mbit[,ranks-per-host=2][,name=tb0]' -> the switch testbed;
    'topology=dgx1v-like|FILE.json[,group=0+1+4][,ranks-per-host=1][,name=tb0]' -> the routed testbed."""
    fields = split_fields(text)
    if "topology" in fields:  # point-to-point links following a topology
        return _routed_from_fields(fields, text)
    return _switch_from_fields(fields, text)


__all__ = ["Testbed", "SwitchTestbed", "TopologyTestbed", "parse_spec"]
