"""`doctor --testbed`'s one argument: an emulated cluster and the faults injected in it, as one spec string
(hosts=8,leaves=2,rate=100mbit[,slow-link=HOST:RATE]...), checked into a typed value."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from collperf import units
from collperf.errors import UsageError
from collperf.lab.doctor.campaign import host_name, uplink_name


@dataclass(frozen=True)
class DoctorTestbedSpec:
    hosts: int = 8
    leaves: int = 2
    rate: str = "100mbit"
    uplink: str | None = None
    size: int = 1 << 20
    repeats: int = 5
    name: str = "dr0"
    slow_link: tuple[int, str] | None = None
    slow_uplink: tuple[int, str] | None = None
    slow_rank: tuple[int, float] | None = None
    kill_host: tuple[int, float] | None = None
    test_timeout_s: float = 60.0

    @property
    def rate_Bps(self) -> float:
        return units.parse_bandwidth(self.rate)

    @property
    def per_leaf(self) -> int:
        return math.ceil(self.hosts / self.leaves)

    @property
    def uplink_Bps(self) -> float:
        return units.parse_bandwidth(self.uplink) if self.uplink else self.rate_Bps * self.per_leaf

    def leaf_of(self, h: int) -> int:
        return h // self.per_leaf

    def groups(self) -> list[list[int]]:
        return [list(range(i, min(i + self.per_leaf, self.hosts))) for i in range(0, self.hosts, self.per_leaf)]

    def faults(self) -> list[str]:
        out = []
        if self.slow_link:
            out.append(f"{host_name(self.slow_link[0])} link at {self.slow_link[1]}")
        if self.slow_uplink:
            out.append(f"{uplink_name(self.slow_uplink[0])} at {self.slow_uplink[1]}")
        if self.slow_rank:
            out.append(f"{host_name(self.slow_rank[0])} rank delayed {units.format_time(self.slow_rank[1])} per repeat")
        if self.kill_host:
            out.append(f"{host_name(self.kill_host[0])} killed after {self.kill_host[1]:g} s")
        return out


_FIELDS = (
    "hosts=8,leaves=2,rate=100mbit[,uplink=RATE][,size=1M][,repeats=5][,name=dr0][,slow-link=HOST:RATE]"
    "[,slow-uplink=LEAF:RATE][,slow-rank=HOST:DELAY][,kill-host=HOST:AFTER]"
)


def parse_spec(text: str) -> DoctorTestbedSpec:
    """'hosts=8,leaves=2,rate=100mbit,slow-link=host3:50mbit' -> DoctorTestbedSpec, every field checked."""
    fields: dict[str, str] = {}
    for part in str(text).split(","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not value.strip():
            raise UsageError(f"doctor testbed {text!r}: {part.strip()!r} is not FIELD=VALUE; expected {_FIELDS}")
        fields[key] = value.strip()
    known = {
        "hosts",
        "leaves",
        "rate",
        "uplink",
        "size",
        "repeats",
        "name",
        "slow_link",
        "slow_uplink",
        "slow_rank",
        "kill_host",
        "timeout",
    }
    unknown = sorted(set(fields) - known)
    if unknown:
        raise UsageError(f"doctor testbed {text!r}: unknown field(s) {', '.join(unknown)}; expected {_FIELDS}")

    def whole(key, default, low, high):
        try:
            v = int(fields.get(key, default))
        except ValueError:
            v = None
        if v is None or not low <= v <= high:
            raise UsageError(
                f"doctor testbed {text!r}: {key}={fields.get(key)!r}: expected a whole number from {low} to {high}"
            )
        return v

    hosts = whole("hosts", 8, 2, 32)
    leaves = whole("leaves", 1 if hosts < 4 else 2, 1, hosts)
    repeats = whole("repeats", 5, 3, 50)
    rate = fields.get("rate", "100mbit")
    for key in ("rate", "uplink"):
        if key in fields or key == "rate":
            _rate(text, key, fields.get(key, rate))
    try:
        size = units.parse_size(fields.get("size", "1M"))
    except UsageError:
        size = 0
    if not 4 <= size <= 1 << 30:
        raise UsageError(
            f"doctor testbed {text!r}: size={fields.get('size')!r}: expected a size from 4 bytes to 1G, e.g. 1M"
        )
    name = fields.get("name", "dr0")
    if not re.fullmatch(r"[a-z0-9]{1,6}", name):
        raise UsageError(f"doctor testbed {text!r}: name={name!r}: expected 1 to 6 lowercase letters or digits")
    timeout = _time(text, "timeout", fields.get("timeout", "60s"))
    per_leaf = math.ceil(hosts / leaves)
    spec = dict(
        hosts=hosts,
        leaves=leaves,
        rate=rate,
        uplink=fields.get("uplink"),
        size=size,
        repeats=repeats,
        name=name,
        test_timeout_s=timeout,
    )
    for key, kind in (("slow_link", "host"), ("slow_uplink", "leaf"), ("slow_rank", "host"), ("kill_host", "host")):
        if key not in fields:
            continue
        where, colon, value = fields[key].partition(":")
        count = hosts if kind == "host" else math.ceil(hosts / per_leaf)
        m = re.fullmatch(rf"(?:{kind})?(\d+)", where.strip())
        if not colon or m is None or not int(m.group(1)) < count:
            flag = key.replace("_", "-")
            raise UsageError(
                f"doctor testbed {text!r}: {flag}={fields[key]!r}: expected {kind.upper()}:VALUE with "
                f"{kind.upper()} one of {kind}0..{kind}{count - 1}, e.g. {flag}={kind}1:"
                f"{'50mbit' if key.startswith('slow_l') or key == 'slow_uplink' else '0.05s' if key == 'slow_rank' else '5s'}"
            )
        index = int(m.group(1))
        if key in ("slow_link", "slow_uplink"):
            _rate(text, key.replace("_", "-"), value)
            spec[key] = (index, value)
        else:
            spec[key] = (index, _time(text, key.replace("_", "-"), value, zero=key == "kill_host"))
    return DoctorTestbedSpec(**spec)


def _rate(text: str, key: str, value: str) -> float:
    try:
        rate = units.parse_bandwidth(value)
    except UsageError:
        rate = 0.0
    if not 0 < rate < math.inf:
        raise UsageError(
            f"doctor testbed {text!r}: {key}={value!r}: expected a finite rate with its unit, e.g. "
            "100mbit (tc spelling) or 12.5MB/s"
        )
    return rate


def _time(text: str, key: str, value: str, zero: bool = False) -> float:
    try:
        t = units.parse_time(value)
    except UsageError:
        t = -1.0
    if not (t >= 0 if zero else t > 0) or t == math.inf:
        raise UsageError(f"doctor testbed {text!r}: {key}={value!r}: expected a time such as 0.05s or 5s")
    return t
