"""Nodes x GPUs per node from the device lines that remain where nccl-tests elided some ('...'): read from the hosts'
numbering (rank = host x g + device), checked on every remaining line, or left open with the flag that settles it;
and --nodes on a rack-scale system counts its NVLink domains."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collperf.diagnose import diagnose
from collperf.errors import UsageError
from collperf.ingest import parse
from collperf.ingest.host_layout import read_layout
from collperf.spec import HardwareSpec
from tests.test_counts_read import _alltoall_128, _log, MIB


def _devices(lines):
    return [{"rank": r, "host": h, "device": d} for r, h, d in lines]


def test_gb200_alltoall_is_32_hosts_of_4_not_a_guess():
    # rank 0 on node-000 device 0, rank 127 on node-031 device 3: 127 - 3 = (31 - 0) x 4, so 4 GPUs a host,
    # and the count column's 128 ranks / 4 = 32 hosts (a full device list of the same run says the same)
    table = parse(_alltoall_128(), "a2a.txt")[0]
    assert (table.ranks, table.nodes, table.header["gpus_per_host"]) == (128, 32, 4)
    assert table.header["nodes_from"] == "host numbering"
    assert any(n.startswith("32 node(s) x 4 GPUs read from the device lines that remain") for n in table.notes)
    # a rack-scale system counts NVLink domains: 32 trays of 4 on the fewest domains of 72 that hold them, 2,
    # and the source names the flag that sets another count
    d = diagnose(table)
    assert (d.assumed.system.nodes, d.assumed.system.gpus_per_node) == (2, 64)
    nodes_source = next(src for label, _, src in d.assumed.values if label == "nodes")
    assert "--nodes N sets the count" in nodes_source


def test_nodes_on_a_rack_scale_system_counts_nvlink_domains():
    table = parse(_alltoall_128(), "a2a.txt")[0]
    d = diagnose(table, hardware=HardwareSpec(nodes=4))
    assert (d.assumed.system.nodes, d.assumed.system.gpus_per_node) == (4, 32)
    with pytest.raises(
        UsageError,
        match=r"--nodes 1 puts 128 GPUs in an NVLink domain of gb200-nvl72, which holds "
        r"72: give --nodes 2 or more",
    ):
        diagnose(table, hardware=HardwareSpec(nodes=1))


def test_lettered_hosts_and_the_busbw_rank_count():
    # tests/fixtures/elided_devices.txt's lines: ranks 0, 1 on node-a (devices 0, 1), rank 15 on node-b device 7
    g, why, hosts = read_layout(_devices([(0, "node-a", 0), (1, "node-a", 1), (15, "node-b", 7)]))
    assert (g, hosts) == (8, 2) and why == "rank = host x 8 + device on every device line listed"


@pytest.mark.parametrize(
    "lines, why",
    [
        ([(0, "node-000", 0), (127, "node-000", 3)], "one host listed"),
        ([(0, "alpha", 0), (127, "beta", 3)], "a host name without a number"),
        ([(0, "gpu-01", 0), (127, "cpu-31", 3)], "host names of different patterns"),
        # round-robin placement: rank 1 on the second host
        ([(0, "node-0", 0), (1, "node-1", 0), (127, "node-31", 3)], "ranks that do not follow the hosts' numbers"),
        ([(0, "node-0", 0), (126, "node-31", 3)], "ranks that do not follow the hosts' numbers"),
    ],
)
def test_lines_that_do_not_settle_the_layout(lines, why):
    assert read_layout(_devices(lines))[:2] == (None, why)


def test_an_unsettled_layout_names_the_flag():
    rows = [(size, size // 4 // 128, 50 + size / 40e3, 1.0, 127 / 128) for size in (MIB, 4 * MIB)]
    devices = [
        "#  Rank  0 Group  0 Pid   1000 on alpha device  0 [0000:00:00] NVIDIA GB200",
        "#  ...",
        "#  Rank 127 Group  0 Pid   1127 on beta device  3 [0000:03:00] NVIDIA GB200",
    ]
    table = parse(_log("alltoall_perf", rows, devices), "a2a.txt")[0]
    assert table.ranks == 128 and table.nodes is None
    assert any(
        "do not settle nodes x GPUs per node (a host name without a number): --nodes N settles it" in n
        for n in table.notes
    )


@settings(max_examples=60, deadline=None)
@given(
    per_host=st.integers(1, 16),
    hosts=st.integers(2, 64),
    first=st.integers(0, 3),
    width=st.integers(1, 4),
    data=st.data(),
)
def test_any_block_layout_is_read_back_from_two_hosts_lines(per_host, hosts, first, width, data):
    # ranks placed host by host, hosts numbered from `first` with `width` digits: any listed subset that spans two
    # hosts gives back the GPUs per host and at least the highest listed host
    ranks = data.draw(
        st.lists(st.integers(0, per_host * hosts - 1), min_size=2, max_size=6, unique=True).filter(
            lambda rs: len({r // per_host for r in rs}) > 1
        )
    )
    lines = [(r, f"gpu-node{first + r // per_host:0{width}d}", r % per_host) for r in ranks]
    g, _, at_least = read_layout(_devices(lines))
    assert g == per_host and at_least == max(ranks) // per_host + 1
