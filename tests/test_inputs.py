"""Inputs a user types, taken as meant: one layout check for predict and diagnose (ranks per node at most the
catalogue's GPUs per node), errors that name the flags as typed, sizes in bits refused. Exit 2, no traceback."""

import pytest
from hypothesis import given, settings, strategies as st

from collperf import api
from collperf.diagnose import assume
from collperf.errors import UsageError
from collperf.ingest import load
from collperf.model.hardware.nodes import nodes_for
from collperf.spec import HardwareSpec, NetworkSpec

from cli_support import cli_error


# ---- the shared rule, by hand ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ranks, nodes, gpus, expected",
    [
        (16, None, 8, 2),  # whole nodes
        (8, None, 8, 1),
        (4, None, 8, 1),  # fits one node: 4 of its 8 GPUs
        (12, 2, 8, 2),  # 6 of 8 GPUs on each of 2 nodes
        (8, 2, 8, 2),  # 2 x 4, as many public runs
        (None, 3, 8, 3),
        (None, None, 8, 1),
    ],
)
def test_layouts_the_hardware_can_have(ranks, nodes, gpus, expected):
    assert nodes_for(ranks, nodes, gpus, system="--cluster x") == expected


@pytest.mark.parametrize(
    "ranks, nodes, gpus, fragment",
    [
        (
            12,
            None,
            8,
            "--ranks 12 neither fills whole nodes of --cluster x (8 GPUs each) nor fits on one: give a multiple "
            "of 8 (e.g. 8 or 16), or say how they spread: --nodes 2 (6 rank(s) on each node)",
        ),
        (
            32,
            2,
            8,
            "--ranks 32 on --nodes 2 puts 16 ranks on each node, but a node of --cluster x has 8 GPUs: give "
            "--nodes 4 (8 rank(s) on each node), or at most 16 ranks on 2 node(s)",
        ),
        (
            8,
            1,
            4,
            "--ranks 8 on --nodes 1 puts 8 ranks on each node, but a node of --cluster x has 4 GPUs: give --nodes 2",
        ),
        (12, 5, 8, "--ranks 12 does not split evenly over --nodes 5: give --nodes 2 (6 rank(s) on each node)"),
        (
            20,
            None,
            8,
            "give a multiple of 8 (e.g. 16 or 24), or say how they spread: --nodes 4 (5 rank(s) on each node)",
        ),
    ],
)
def test_layouts_it_cannot_have_are_refused_with_what_would_work(ranks, nodes, gpus, fragment):
    with pytest.raises(UsageError) as info:
        nodes_for(ranks, nodes, gpus, system="--cluster x")
    assert fragment in str(info.value)


@settings(deadline=None, max_examples=300)
@given(st.integers(1, 600), st.none() | st.integers(1, 80), st.integers(1, 72))
def test_a_layout_is_taken_only_when_the_nodes_can_hold_it(ranks, nodes, gpus):
    try:
        got = nodes_for(ranks, nodes, gpus, system="s")
    except UsageError as e:
        # refused: the ranks do not split, or a node would hold more ranks than GPUs, and the --nodes the
        # message offers is a layout that is taken
        assert (nodes is not None and (ranks % nodes or ranks // nodes > gpus)) or (
            nodes is None and ranks > gpus and ranks % gpus
        )
        offered = int(str(e).split("--nodes ")[-1].split()[0])
        assert nodes_for(ranks, offered, gpus, system="s") == offered
        return
    assert ranks % got == 0 and ranks // got <= gpus
    assert nodes is None or got == nodes
    assert nodes is not None or got == (1 if ranks <= gpus else ranks // gpus)


# ---- diagnose: one number and logs given --cluster -------------------------------------------------------------


@pytest.mark.parametrize(
    "args, fragment",
    [
        (
            ["--ranks", 12, "--cluster", "dgx-h100"],
            "--ranks 12 neither fills whole nodes of --cluster dgx-h100 (8 GPUs each) nor fits on one",
        ),
        (
            ["--ranks", 32, "--nodes", 2, "--cluster", "dgx-h100"],
            "--ranks 32 on --nodes 2 puts 16 ranks on each node, but a node of --cluster dgx-h100 has 8 GPUs",
        ),
        (
            ["--ranks", 8, "--cluster", "aws-g4dn-12xlarge", "--nodes", 1],
            "--ranks 8 on --nodes 1 puts 8 ranks on each node, but a node of --cluster aws-g4dn-12xlarge has 4 GPUs: give "
            "--nodes 2",
        ),
        # without --cluster the GPU's catalogue entry is a guess, so only the split itself is checked
        (
            ["--ranks", 12, "--gpu", "H100", "--nodes", 5],
            "--ranks 12 cannot be split evenly over --nodes 5: set --nodes to a divisor of 12",
        ),
    ],
)
def test_diagnose_one_number_refuses_a_layout_the_system_cannot_have(capsys, args, fragment):
    message = cli_error(capsys, "diagnose", "allreduce", "--size", "1GiB", "--time", "5ms", *args)
    assert fragment in message


def test_diagnose_one_number_on_part_of_a_node_says_where_one_node_came_from():
    doc = api.diagnose_measurement(
        collective="allreduce", size="1GiB", time="5ms", ranks=4, cluster="dgx-h100"
    ).to_json()
    values = {v["name"]: v for v in doc["system"]["values"]}
    assert values["nodes"]["value"] == "1" and values["nodes"]["source"] == "assumed: one node (--nodes not given)"
    assert values["GPUs per node"]["value"] == "4"


@pytest.mark.parametrize(
    "gpu, ranks, nodes, per_node",
    [
        ("RTX 4090", 4, 1, 4),  # the GeForce template holds 2 per node: no fact about the user's box
        ("T4", 8, 1, 8),  # the T4 template holds 1
        ("RTX 4090", 16, 2, 8),  # more than one PCIe box holds: boxes of 8 (the PCIe board's)
        ("H100", 16, 2, 8),  # an NVLink system: its nodes of 8 are a fact
        ("RTX 2080 Ti", 10, 5, 2),  # beyond one box: the template's split
    ],
)
def test_one_number_on_a_gpu_model_is_one_pcie_box_unless_too_many(gpu, ranks, nodes, per_node):
    doc = api.diagnose_measurement(collective="allreduce", size="1GiB", time="500ms", ranks=ranks, gpu=gpu).to_json()
    values = {v["name"]: v["value"] for v in doc["system"]["values"]}
    assert (values["nodes"], values["GPUs per node"]) == (str(nodes), str(per_node))


def _log(tmp_path, per_host: int, hosts: int):
    """An allreduce log of `per_host` H100 ranks on each of `hosts` hosts (device lines), three sizes."""
    devices = [
        f"#  Rank {r:2d} Group  0 Pid {r} on node{r // per_host} device {r % per_host} [0x1b] NVIDIA H100 80GB HBM3"
        for r in range(per_host * hosts)
    ]
    rows = [
        f"{n:12d} {n // 4:12d}     float     sum      -1  {t:8.1f} 0 0 0 {t:8.1f} 0 0 0"
        for n, t in ((1 << 20, 80.0), (1 << 26, 900.0), (1 << 30, 12000.0))
    ]
    path = tmp_path / f"run{per_host}x{hosts}.txt"
    path.write_text(
        "\n".join(
            [
                "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 64(factor)",
                "# Using devices",
                *devices,
                *rows,
            ]
        )
        + "\n"
    )
    return load(path)[0]


def test_a_log_given_cluster_is_checked_against_its_nodes_and_fewer_gpus_per_node_still_work(tmp_path):
    # 16 ranks on one host judged as a DGX H100 (8 GPUs): the log's own layout is impossible there
    with pytest.raises(
        UsageError,
        match=r"the log's 16 ranks on 1 node\(s\) \(from the hosts in the device lines\) "
        r"puts 16 ranks on each node, but a node of --cluster dgx-h100 has 8 GPUs",
    ):
        assume(_log(tmp_path, 16, 1), HardwareSpec(cluster="dgx-h100"))
    # 2 x 4 on 8-GPU machines (as public runs are): taken, with the GPUs per node the log used
    a = assume(_log(tmp_path, 4, 2), HardwareSpec(cluster="dgx-h100"))
    assert (a.system.nodes, a.system.gpus_per_node) == (2, 4)
    a = assume(_log(tmp_path, 4, 2), HardwareSpec(cluster="dgx-h100", nodes=2))
    assert (a.system.nodes, a.system.gpus_per_node, a.system.nics_per_node) == (2, 4, 4)  # their 4 NICs of 8


# ---- predict: the same rule, the flags named as typed ----------------------------------------------------------


def test_predict_takes_part_of_each_node_and_their_nics():
    # 12 ranks on 2 DGX H100: 6 of 8 GPUs per node, each with its own 400 Gb/s NIC (one rail per GPU): 6 NICs,
    # so a rank's network share stays one NIC, 50 GB/s
    c = NetworkSpec(cluster="dgx-h100", nodes=2, ranks=12).resolve_cluster()
    assert (c.nodes, c.ranks_per_node, c.nics_per_node) == (2, 6, 6)
    assert c.inter_per_rank.bandwidth_Bps == pytest.approx(400e9 / 8)
    c = NetworkSpec(cluster="dgx-h100", ranks=4).resolve_cluster()
    assert (c.nodes, c.ranks_per_node) == (1, 4)
    # a NIC shared by the node's GPUs (g4dn: 1 NIC for 4 T4) stays one NIC
    c = NetworkSpec(cluster="aws-g4dn-12xlarge", nodes=2, ranks=4).resolve_cluster()
    assert (c.ranks_per_node, c.nics_per_node) == (2, 1)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (
            ["--nodes", 2, "--ranks", 32],
            "--ranks 32 on --nodes 2 puts 16 ranks on each node, but a node of --cluster "
            "dgx-h100 has 8 GPUs: give --nodes 4 (8 rank(s) on each node), or at most 16 ranks "
            "on 2 node(s); or --ranks-per-node N to price nodes of N ranks anyway",
        ),
        (["--ranks", 12], "--ranks 12 neither fills whole nodes of --cluster dgx-h100 (8 GPUs each)"),
        (
            ["--nodes", 2, "--ranks", 12, "--ranks-per-node", 8],
            "--ranks 12 is not --nodes 2 x --ranks-per-node 8 = 16: give --ranks 16 (or leave --ranks out)",
        ),
    ],
)
def test_predict_names_the_flags_as_typed(capsys, args, fragment):
    assert fragment in cli_error(capsys, "predict", "allreduce", "--size", "1G", "--cluster", "dgx-h100", *args)


def test_a_network_built_by_hand_names_what_to_change():
    from collperf.model.network import Network
    from collperf.model.hardware.presets import get_preset

    with pytest.raises(
        UsageError,
        match=r"12 ranks \(--ranks\) is not the cluster's 2 node\(s\) \(--nodes\) x 8 ranks "
        r"per node of dgx-h100 = 16: give --ranks 16",
    ):
        Network.of(get_preset("dgx-h100", nodes=2), 12)


# ---- sizes in bits, wherever a size is read --------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["predict", "allreduce", "--size", "1Gb", "--cluster", "dgx-h100"],
        ["diagnose", "allreduce", "--size", "1Gb", "--time", "5ms", "--ranks", 8, "--cluster", "dgx-h100"],
        ["bench", "-b", "1Mb", "-e", "4M", "--ranks", 2],
    ],
)
def test_a_size_in_bits_is_refused_on_every_command(capsys, args):
    message = cli_error(capsys, *args)
    assert "is bits (a small b), but sizes are bytes" in message


@pytest.mark.parametrize(
    "gpu, ranks, fragment",
    [
        (
            "A100",
            10,
            "--ranks 10 neither fills whole nodes of --gpu A100's dgx-a100 (8 GPUs each) nor fits on one: "
            "give a multiple of 8 (e.g. 8 or 16), or say how they spread: --nodes 2 (5 rank(s) on each node)",
        ),
        (
            "RTX 2080 Ti",
            9,
            "--ranks 9 neither fills whole nodes of --gpu RTX 2080 Ti's pcie-2080ti (2 GPUs each) nor fits on one",
        ),
    ],
)
def test_one_number_on_a_gpu_model_refuses_a_layout_its_nodes_cannot_hold(capsys, gpu, ranks, fragment):
    message = cli_error(
        capsys, "diagnose", "allreduce", "--size", "1GiB", "--time", "5ms", "--ranks", ranks, "--gpu", gpu
    )
    assert fragment in message


def test_a_gpu_not_in_the_catalogue_is_named_as_typed(capsys):
    message = cli_error(
        capsys, "diagnose", "allreduce", "--size", "1GiB", "--time", "1s", "--ranks", 8, "--gpu", "Radeon RX 7900 XTX"
    )
    assert "--gpu 'Radeon RX 7900 XTX' is not in the parts table" in message and "None" not in message
