"""A small cluster on one Linux machine: network namespaces as hosts, shaped veth links to a switch.

Layout for a testbed named NAME with H hosts:
  NAME-sw          a namespace holding the switch: a bridge `br0`, no address
  NAME-h0 .. hH-1  one namespace per host; its `eth0` is one end of a veth pair, the other end
                   (`p0` .. in NAME-sw) is a port of the bridge
Each host's link is shaped in both directions with a token bucket (tc tbf) to `rate`: egress on the
host's eth0, and egress on its switch port (what the host receives). Ranks on one host talk through
that namespace's own stack (unshaped, fast: intra-node); ranks on different hosts cross two shaped
links through the bridge (inter-node). Addresses are 10.(77 + k).0.(h + 1)/24, private to the
namespaces: no route leads out of them.

Teardown removes the namespaces (their veths go with them) and kills what runs inside them. Each
testbed name has one holder (owners.py: pid and start time, written at `up`): a run never takes down a
testbed another live process holds, and `down` without a name removes only what nobody alive holds.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import signal
import subprocess
import zlib
from dataclasses import dataclass

from collperf import units
from collperf.errors import UsageError
from collperf.lab.calibrate import calibrate, check_ranks
from collperf.lab.testbed import owners
from collperf.runtime import owned
from collperf.lab.validate import calibrated_grid

PREFIX = "cptb"  # every namespace of every testbed starts with this


QUEUE_S = 0.02  # the data queue of a shaped link holds this many seconds at the rate


class TestbedError(UsageError):
    """A testbed command that failed (the message names the command and what it said)."""


def check_supported() -> None:
    """The testbed needs Linux, root and iproute2; say which is missing."""
    if platform.system() != "Linux":
        raise UsageError(f"the testbed needs Linux network namespaces; this is {platform.system()}")
    if os.geteuid() != 0:
        raise UsageError(
            "the testbed needs root (it creates network namespaces and shapes links with tc): "
            "run as root, e.g. in CI or a container"
        )
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise UsageError(f"the testbed needs `{tool}` from iproute2: install it (apt-get install iproute2)")


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise TestbedError(f"testbed: `{' '.join(args)}` failed: {result.stderr.strip() or result.stdout.strip()}")
    return result


@dataclass
class Testbed:
    hosts: int = 4
    rate: str = "200mbit"
    ranks_per_host: int = 1
    name: str = "tb0"

    def __post_init__(self):
        # the flag and the spec field both, as either may be what the user typed (testbed up / --testbed)
        if isinstance(self.hosts, bool) or not isinstance(self.hosts, int) or not 1 <= self.hosts <= 64:
            raise UsageError(
                f"hosts {self.hosts!r}: a testbed has at least 1 host and at most 64 (--hosts N, "
                "or hosts=N in --testbed)"
            )
        if isinstance(self.ranks_per_host, bool) or not isinstance(self.ranks_per_host, int) or self.ranks_per_host < 1:
            raise UsageError(
                f"ranks per host {self.ranks_per_host!r}: expected a whole number >= 1 "
                "(--ranks-per-host N, or ranks-per-host=N in --testbed)"
            )
        if not re.fullmatch(r"[a-z0-9]{1,6}", self.name):
            raise UsageError(f"testbed name {self.name!r}: expected 1 to 6 lowercase letters or digits")
        try:
            self.rate_Bps = units.parse_bandwidth(self.rate)
        except UsageError:
            raise UsageError(
                f"testbed rate {self.rate!r}: expected a rate with its unit, e.g. 200mbit or 1gbit "
                "(tc spelling) or 25MB/s (--rate R, or rate=R in --testbed)"
            ) from None
        if self.rate_Bps == float("inf") or self.rate_Bps <= 0:
            raise UsageError(f"testbed rate {self.rate!r}: must be finite and positive, e.g. 200mbit")

    # names and addresses --------------------------------------------------------------------------
    @property
    def switch(self) -> str:
        return f"{PREFIX}-{self.name}-sw"

    def host(self, h: int) -> str:
        return f"{PREFIX}-{self.name}-h{h}"

    def address(self, h: int) -> str:
        return f"10.{77 + zlib.crc32(self.name.encode()) % 100}.0.{h + 1}"

    @property
    def ranks(self) -> int:
        return self.hosts * self.ranks_per_host

    def host_of(self, rank: int) -> int:
        return rank // self.ranks_per_host

    @property
    def rate_bits(self) -> str:
        return f"{int(self.rate_Bps * 8)}bit"

    # life cycle -------------------------------------------------------------------------------
    def up(self) -> "Testbed":
        check_supported()
        take(self.name)  # refused while another live run holds the name; what a dead one left is removed
        try:
            _run("ip", "netns", "add", self.switch)
            _run("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
            _run("ip", "-n", self.switch, "link", "set", "br0", "up")
            _run("ip", "-n", self.switch, "link", "set", "lo", "up")
            for h in range(self.hosts):
                ns, port = self.host(h), f"p{h}"
                _run("ip", "netns", "add", ns)
                _run(
                    "ip",
                    "link",
                    "add",
                    f"{PREFIX}{self.name}x{h}",
                    "type",
                    "veth",
                    "peer",
                    "name",
                    f"{PREFIX}{self.name}y{h}",
                )
                _run("ip", "link", "set", f"{PREFIX}{self.name}x{h}", "netns", ns, "name", "eth0")
                _run("ip", "link", "set", f"{PREFIX}{self.name}y{h}", "netns", self.switch, "name", port)
                _run("ip", "-n", ns, "addr", "add", f"{self.address(h)}/24", "dev", "eth0")
                _run("ip", "-n", ns, "link", "set", "eth0", "up")
                _run("ip", "-n", ns, "link", "set", "lo", "up")
                # a collective's steps leave a connection idle between messages; by default TCP then
                # restarts from a small window each step, which only the first message should pay
                _run("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.tcp_slow_start_after_idle=0")
                _run("ip", "-n", self.switch, "link", "set", port, "master", "br0")
                _run("ip", "-n", self.switch, "link", "set", port, "up")
                self._shape(ns, "eth0")
                self._shape(self.switch, port)
        except BaseException:
            give_back(self.name)
            raise
        return self

    def _shape(self, ns: str, dev: str) -> None:
        for line in shape_commands(dev, self.rate_Bps):
            _run("ip", "netns", "exec", ns, "tc", *line.split())

    def down(self) -> list[str]:
        return give_back(self.name)

    def __enter__(self) -> "Testbed":
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()

    def describe(self) -> str:
        return (
            f"testbed {self.name}: {self.hosts} hosts x {self.ranks_per_host} ranks, links shaped to "
            f"{units.format_bandwidth(self.rate_Bps)} ({self.rate}) each way"
        )

    # the Testbed protocol's capabilities (lab/testbed/__init__.py) ----------------------------------
    # one shaped link per host into one switch: no topology of its own, so the network a profile describes
    # (calibrated here, or given) is what predicts its runs
    topology = None

    def calibrate(self, timeout_s: float = 300.0, on_link=None) -> dict:
        """Ping-pong within a host and across the switch (lab/calibrate.py); on_link is unused: no per-link
        measurement here."""
        return calibrate(None, self, timeout_s)

    def prebuilt_schedules(self, sweep) -> None:
        return None  # every schedule run here is built from the rank count alone

    def predict_rows(self, results, rows, schedules=None) -> bool:
        return False

    def check_calibration(self) -> None:
        check_ranks(None, self)  # a link is measured between two ranks

    def validation_grid(self, sizes, iters: int, timeout_s: float, profile=None, on_step=None) -> tuple[str, list]:
        return calibrated_grid(self, None, sizes, iters, timeout_s, profile, on_step=on_step)


def shape_commands(dev: str, rate_Bps: float) -> list[str]:
    """tc commands (without `tc`) shaping `dev`'s egress to rate_Bps with htb. Small packets (IP length
    < 128 B: TCP ACKs) get their own class with priority: behind a deep queue of data they would wait for
    it, and a two-way exchange would run at half the rate (bufferbloat; the kernels here have no fq_codel).
    The data class gets a deep queue, so that TCP is shaped rather than dropped (drops make it back off at
    random, which no cost model predicts)."""
    rate, tenth = f"{int(rate_Bps * 8)}bit", f"{max(1, int(rate_Bps * 8 / 10))}bit"
    bulk = f"{max(1, int(rate_Bps * 8 * 9 / 10))}bit"
    return [
        f"qdisc add dev {dev} root handle 1: htb default 20 r2q 1000",
        f"class add dev {dev} parent 1: classid 1:1 htb rate {rate} ceil {rate}",
        f"class add dev {dev} parent 1:1 classid 1:10 htb rate {tenth} ceil {rate} prio 0",
        f"class add dev {dev} parent 1:1 classid 1:20 htb rate {bulk} ceil {rate} prio 1",
        f"filter add dev {dev} parent 1: protocol ip prio 1 u32 match u16 0x0000 0xff80 at 2 flowid 1:10",
        f"qdisc add dev {dev} parent 1:20 handle 20: bfifo limit {max(256 * 1024, int(rate_Bps * QUEUE_S))}",
    ]


def namespaces(name: str | None = None) -> list[str]:
    """Namespaces of the testbed `name` (all testbeds when None)."""
    if shutil.which("ip") is None:
        return []
    listed = _run("ip", "netns", "list", check=False).stdout.split("\n")
    wanted = f"{PREFIX}-{name}-" if name else f"{PREFIX}-"
    return sorted(line.split()[0] for line in listed if line.startswith(wanted))


def testbed_of(ns: str) -> str:
    """The testbed name of one of its namespaces (PREFIX-NAME-host)."""
    return ns[len(PREFIX) + 1 :].rsplit("-", 1)[0]


def take(name: str) -> None:
    """Before bringing testbed `name` up: refuse while a live process holds it (two runs of one name would
    tear each other down); remove what a dead holder left; record this process as the holder."""
    who = owners.holder(name)
    if who is not None and not owners.mine(name):
        raise TestbedError(
            f"testbed {name!r} is in use by {who}: give this run another name (name=tb1 in "
            "--testbed, or --name tb1), or wait for that one to end"
        )
    _remove(name)
    owners.claim(name)
    _remove_dead()


def give_back(name: str) -> list[str]:
    """Tear down the testbed this process holds (or that nobody alive holds); leave another's alone."""
    if owners.holder(name) is not None and not owners.mine(name):
        return []
    removed = _remove(name)
    owners.release(name)
    return removed


def down(name: str | None = None, everything: bool = False) -> list[str]:
    """`collperf testbed down`: the named testbed (unless a live run holds it: pass everything=True), or,
    with no name, every testbed nobody alive holds any more (everything=True: all of them)."""
    if name is not None:
        who = owners.holder(name)
        if who is not None and not everything and not owners.mine(name) and not who.startswith("`collperf testbed up`"):
            raise TestbedError(
                f"testbed {name!r} is in use by {who}: taking it down would kill that run; pass --all to do it anyway"
            )
        removed = _remove(name)
        owners.release(name)
        return removed
    removed = []
    for bed in sorted({testbed_of(ns) for ns in namespaces()}):
        if everything or owners.holder(bed) is None:
            removed += _remove(bed)
            owners.release(bed)
    owned.sweep()  # and the temporary directories of launchers that were killed
    return removed


def _remove_dead() -> None:
    """The testbeds whose recorded holder has died (a launcher killed before it could tear down what it
    started): the next run removes them. One with no record is left for `collperf testbed down`."""
    for bed in owners.names():
        if owners.record(bed) is not None and owners.holder(bed) is None:
            _remove(bed)
            owners.release(bed)


def held() -> list[str]:
    """Testbeds on this machine that a live process (or `collperf testbed up`) holds."""
    return sorted(bed for bed in {testbed_of(ns) for ns in namespaces()} if owners.holder(bed) is not None)


def _remove(name: str) -> list[str]:
    """Kill what runs in the testbed's namespaces and delete them."""
    removed = []
    for ns in namespaces(name):
        pids = _run("ip", "netns", "pids", ns, check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        _run("ip", "netns", "delete", ns, check=False)
        removed.append(ns)
    # a topology testbed makes its veth pairs here before moving them: a crash in between leaves them
    links = _run("ip", "-o", "link", check=False).stdout if shutil.which("ip") else ""
    for dev in re.findall(rf"^\d+: ({PREFIX}{re.escape(name)}[abxy]\d+)[@:]", links, re.M):
        _run("ip", "link", "delete", dev, check=False)
    return removed


def status(name: str | None = None) -> list[dict]:
    """The namespaces found, with their address and shaping."""
    out = []
    for ns in namespaces(name):
        addr = _run("ip", "-n", ns, "-4", "-o", "addr", "show", check=False).stdout
        devices = re.findall(r"^\d+: ([^:@]+)", _run("ip", "-n", ns, "-o", "link", check=False).stdout, re.M)
        rates = [
            rate
            for dev in devices
            for rate in re.findall(
                r"class htb 1:1 root rate (\S+)",
                _run("ip", "netns", "exec", ns, "tc", "class", "show", "dev", dev, check=False).stdout,
            )
        ]
        out.append(
            {
                "namespace": ns,
                "addresses": re.findall(r"inet (\S+)", addr),
                "shaping": rates,
                "processes": len(_run("ip", "netns", "pids", ns, check=False).stdout.split()),
            }
        )
    return out


def split_fields(text: str) -> dict:
    """'a=1,b-c=2' -> {'a': '1', 'b_c': '2'}: a testbed description's fields, option spelling folded."""
    fields = {}
    for part in str(text).split(","):
        key, _, value = part.partition("=")
        fields[key.strip().replace("-", "_")] = value.strip()
    return fields


def parse_spec(text: str) -> Testbed:
    """'hosts=4,rate=200mbit[,ranks-per-host=2][,name=tb0]' -> Testbed (any kind of testbed:
    lab/testbed/__init__.py parse_spec)."""
    return parse_fields(split_fields(text), text)


def parse_fields(fields: dict, text: str) -> Testbed:
    """The switch testbed of a description's fields (split_fields); `text` is the description, for errors."""
    unknown = set(fields) - {"hosts", "rate", "ranks_per_host", "name"}
    if unknown:
        raise UsageError(
            f"testbed spec {text!r}: unknown field(s) {', '.join(sorted(unknown))}; expected "
            "hosts=4,rate=200mbit[,ranks-per-host=2][,name=tb0]"
        )
    counts = {}
    for key, default in (("hosts", 4), ("ranks_per_host", 1)):
        try:
            counts[key] = int(fields.get(key, default))
        except ValueError:
            raise UsageError(
                f"testbed spec {text!r}: {key.replace('_', '-')}={fields[key]!r} is not a whole number"
            ) from None
    return Testbed(counts["hosts"], fields.get("rate", "200mbit"), counts["ranks_per_host"], fields.get("name", "tb0"))
