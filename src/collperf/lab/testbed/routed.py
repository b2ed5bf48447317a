"""A testbed that follows a topology: point-to-point links with their own rates, forwarding hosts.

layout.plan says what to build (pure); this builds it: one namespace per vertex, one veth pair
per link shaped each way to the link's rate (switch.shape_commands: htb, ACKs first, a deep data queue),
one /32 per vertex on its `id0` (a bridge with no port: this kernel has no dummy interfaces; nothing
else uses it), IP forwarding on, host routes to every rank along the topology's routes and to every
neighbour over the direct link. Ranks run on the hosts of `group` (default: every rank of the topology),
`ranks_per_host` each, and bind to their host's address (GLOO_SOCKET_IFNAME=id0); the other hosts and
the devices only forward, as the idle GPUs and PCIe switches a packing routes through.

Teardown is the switch testbed's (switch.down: the namespaces by name, their processes killed, veths
left in the root namespace by a crash deleted); `with` and every error path tear down.
"""

from __future__ import annotations

import subprocess

from collperf import units
from collperf.errors import UsageError
from collperf.lab.testbed import routed_runs
from collperf.lab.testbed import switch as T
from collperf.lab.testbed.layout import Plan, parse, plan
from collperf.model.profile import links_profile

IFNAME = "id0"


class TopologyTestbed:
    """The Testbed protocol (lab/testbed/__init__.py) on a topology: hosts are the topology's ranks, links its
    links; the simulator on the same topology is its model."""

    def __init__(self, topology, group=None, ranks_per_host: int = 1, name: str = "tb0"):
        topo = parse(topology) if isinstance(topology, str) else topology
        if isinstance(ranks_per_host, bool) or not isinstance(ranks_per_host, int) or ranks_per_host < 1:
            raise UsageError(f"ranks per host {ranks_per_host!r}: expected a whole number >= 1")
        self.plan: Plan = plan(topo, name)
        self.topology = self.plan.topology
        self.name, self.ranks_per_host = name, ranks_per_host
        group = list(range(topo.ranks)) if group is None else [int(h) for h in group]
        bad = [h for h in group if not 0 <= h < topo.ranks]
        if not group or bad or len(set(group)) != len(group):
            raise UsageError(f"group {group}: expected distinct hosts of 0..{topo.ranks - 1} (the topology's ranks)")
        self.group = group
        self.ifname = IFNAME

    # the interface run_testbed and the commands use --------------------------------------------------
    @property
    def ranks(self) -> int:
        return len(self.group) * self.ranks_per_host

    @property
    def hosts(self) -> int:
        return len(self.group)

    def host_of(self, rank: int) -> int:
        return self.group[rank // self.ranks_per_host]

    def host(self, h) -> str:
        return self.plan.namespace[h]

    def address(self, h) -> str:
        return self.plan.address[h]

    def describe(self) -> str:
        rates = sorted({units.format_bandwidth(link.rate_Bps) for link in self.plan.links})
        return (
            f"testbed {self.name}: topology {self.topology.name} ({len(self.plan.namespace)} namespaces, "
            f"{len(self.plan.links)} point-to-point links at {', '.join(rates)}), ranks on hosts "
            f"{','.join(map(str, self.group))} x {self.ranks_per_host}"
        )

    # the Testbed protocol's capabilities: each link measured, the simulator on the testbed's own topology ---
    def calibrate(self, timeout_s: float = 300.0, on_link=None) -> dict:
        """Every link measured end to end (routed_runs.calibrate_links), as a profile `--profile` reads."""
        links = routed_runs.calibrate_links(self, timeout_s=timeout_s, on_link=on_link)
        return links_profile(self.describe(), self.hosts, self.ranks_per_host, [vars(m) for m in links])

    def prebuilt_schedules(self, sweep) -> dict:
        return routed_runs.schedules(self, sweep)

    def predict_rows(self, results, rows, schedules=None) -> bool:
        routed_runs.predict_rows(results, self, rows, schedules)
        return True

    def check_calibration(self) -> None:
        """Every link of the topology is measured, whatever the group: nothing to refuse."""

    def validation_grid(self, sizes, iters: int, timeout_s: float, profile=None, on_step=None) -> tuple[str, list]:
        """The simulator on the testbed's own topology predicts, in both modes: a profile is not needed."""
        return (
            f"{self.describe()} (simulated on its topology, events and rounds modes)",
            routed_runs.validate(self, sizes, iters=iters, timeout_s=timeout_s, on_step=on_step),
        )

    # life cycle -------------------------------------------------------------------------------------
    def up(self) -> "TopologyTestbed":
        T.check_supported()
        T.take(self.name)  # refused while another live run holds the name
        try:
            self._build()
        except BaseException:
            T.give_back(self.name)
            raise
        return self

    def down(self) -> list[str]:
        return T.give_back(self.name)

    def __enter__(self) -> "TopologyTestbed":
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()

    def _build(self) -> None:
        p = self.plan
        for ns in p.namespace.values():
            T._run("ip", "netns", "add", ns)
        root = []
        for k, link in enumerate(p.links):
            a, b = f"{T.PREFIX}{self.name}a{k}", f"{T.PREFIX}{self.name}b{k}"
            root += [
                f"link add {a} type veth peer name {b}",
                f"link set {a} netns {p.namespace[link.a]} name {link.dev_a}",
                f"link set {b} netns {p.namespace[link.b]} name {link.dev_b}",
            ]
        _batch(["ip", "-batch", "-"], root)
        devices = {v: [] for v in p.namespace}
        for link in p.links:
            devices[link.a].append((link.dev_a, link.rate_Bps))
            devices[link.b].append((link.dev_b, link.rate_Bps))
        for v, ns in p.namespace.items():
            me = p.address[v]
            lines = [
                "link set lo up",
                f"link add {IFNAME} type bridge",
                f"link set {IFNAME} up",
                f"addr add {me}/32 dev {IFNAME}",
            ]
            lines += [f"link set {dev} up" for dev, _ in devices[v]]
            # the next hop is the neighbour's own /32, reached on the link itself (onlink: no subnet)
            lines += [
                f"route add {p.address[dst]}/32 via {p.address[nxt]} dev {dev} onlink src {me}"
                for dst, (nxt, dev) in sorted(p.next_hop[v].items(), key=lambda kv: p.address[kv[0]])
            ]
            _batch(["ip", "-n", ns, "-batch", "-"], lines)
            # forwarding hosts; no reverse-path filter (a route's way back may differ from its way out); a
            # collective's idle connections keep their window (lab/testbed/switch.py)
            T._run(
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-q",
                "-w",
                "net.ipv4.ip_forward=1",
                "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.default.rp_filter=0",
                "net.ipv4.tcp_slow_start_after_idle=0",
            )
            shaping = [line for dev, rate in devices[v] if rate != float("inf") for line in T.shape_commands(dev, rate)]
            if shaping:
                _batch(["ip", "netns", "exec", ns, "tc", "-batch", "-"], shaping)


def _batch(cmd: list[str], lines: list[str]) -> None:
    if not lines:
        return
    result = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise T.TestbedError(f"testbed: `{' '.join(cmd)}` failed: {result.stderr.strip() or result.stdout.strip()}")


def parse_fields(fields: dict, text: str) -> TopologyTestbed:
    """topology=dgx1v-like|FILE.json[,group=0+1+4][,ranks-per-host=1][,name=tb0] (fields already split)."""
    unknown = set(fields) - {"topology", "group", "ranks_per_host", "name"}
    if unknown:
        raise UsageError(
            f"testbed spec {text!r}: unknown field(s) {', '.join(sorted(unknown))}; expected "
            "topology=dgx1v-like|FILE.json[,group=0+1+4][,ranks-per-host=1][,name=tb0]"
        )
    group = fields.get("group")
    try:
        hosts = None if not group else [int(h) for h in group.replace("/", "+").split("+")]
        rph = int(fields.get("ranks_per_host", 1))
    except ValueError:
        raise UsageError(
            f"testbed spec {text!r}: group is hosts joined by '+' (e.g. group=0+1+4) and ranks-per-host a whole number"
        ) from None
    return TopologyTestbed(fields["topology"], hosts, rph, fields.get("name", "tb0"))
