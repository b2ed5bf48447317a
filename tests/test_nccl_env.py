"""What a log or a data sheet does not say, given on the command line: NCCL_PROTO / NCCL_ALGO as NCCL 2.30.7
parses them (src/graph/tuning.cc parseList), the CPU architecture (tuning.cc:643-644) and the GPU-NIC path
that the LL128 rule reads (tuning.cc:518-535)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app, main
from collperf.diagnose import assume
from collperf.errors import UsageError
from collperf.model.nccl import constants as C
from collperf.model.nccl import env, select, tuning_table
from collperf.model.hardware.catalogue import get_system
from collperf.spec import HardwareSpec
from test_loglines import _log


def _cli(*args):
    return CliRunner().invoke(app, ["predict", "allreduce", "--nccl", *args, "--json"])


def _main(capsys, monkeypatch, *args) -> tuple[int, str]:
    """The real entry point, as a user meets it: (exit code, stderr)."""
    monkeypatch.setattr("sys.argv", ["collperf", "predict", "allreduce", "--nccl", *args])
    with pytest.raises(SystemExit) as stop:
        main()
    return stop.value.code, capsys.readouterr().err.replace("\n", " ")


def _sizes(res):
    assert res.exit_code == 0, res.output
    return json.loads(res.output)["sizes"]


def test_t4_two_nodes_simple_only_from_the_cli():
    # NCCL_PROTO=Simple on 2 x 1 T4: tree/Simple at 64 KiB, 59.7 us in NCCL 2.30.7's model
    row = _sizes(_cli("--cluster", "pcie-t4", "--nodes", "2", "--size", "64K", "--proto", "Simple"))[0]
    assert (row["algorithm"], row["protocol"]) == ("tree", "Simple")
    assert row["time_s"] == pytest.approx(59.7e-6, rel=0.02)


def test_parse_list_as_nccl():
    # tuning.cc:45-53: "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring"
    value = "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring"
    assert env.algorithm_enabled(value, "allgather", "ring")
    assert env.algorithm_enabled(value, "allgather", "collnet-direct")
    assert not env.algorithm_enabled(value, "allgather", "tree")
    assert env.algorithm_enabled(value, "allreduce", "tree") and not env.algorithm_enabled(value, "allreduce", "ring")
    assert env.algorithm_enabled(value, "broadcast", "ring") and not env.algorithm_enabled(value, "broadcast", "tree")
    # "NCCL_PROTO="^LL128;allreduce:LL128": everything but LL128, but only LL128 for allreduce"
    value = "^LL128;allreduce:LL128"
    assert env.protocol_state(value, "allgather", "LL128") == env.OFF
    assert env.protocol_state(value, "allgather", "LL") == env.ON
    assert env.protocol_state(value, "allreduce", "LL128") == env.ON
    assert env.protocol_state(value, "allreduce", "Simple") == env.OFF
    assert env.protocol_state("", "allreduce", "LL128") == env.DEFAULT
    # a prefix only for one function leaves the others at NCCL's default
    assert env.protocol_state("allreduce:Simple", "allgather", "LL128") == env.DEFAULT
    # names are case-insensitive (strcasecmp); strtok skips empty tokens
    assert env.protocol_state("simple", "allreduce", "Simple") == env.ON
    assert env.protocol_state("Simple;", "allreduce", "LL") == env.OFF


@pytest.mark.parametrize(
    "value, expected",
    [
        ("Simple;LL", "every entry after the first needs a function prefix"),  # tuning.cc:73
        ("LL,foo", "unknown name(s) 'foo'"),  # tuning.cc:109
        ("tree:Simple", "unknown function 'tree'"),  # tuning.cc:119
    ],
)
def test_nccl_proto_errors_name_the_flag(capsys, monkeypatch, value, expected):
    code, err = _main(capsys, monkeypatch, "--cluster", "dgx-h100", "--nodes", "2", "--size", "64K", "--proto", value)
    assert code == 2 and "--proto" in err and expected in err and "Traceback" not in err


def test_forced_algorithm_and_protocol_are_chosen():
    rows = _sizes(
        _cli("--cluster", "dgx-h100", "--nodes", "2", "--size", "64K,1M,1G", "--algo", "Ring", "--proto", "Simple")
    )
    assert {(r["algorithm"], r["protocol"]) for r in rows} == {("ring", "Simple")}
    # the runner-up is nothing: one entry is left
    assert all(r["runner_up_time_s"] is None for r in rows)


def test_named_ll128_skips_the_default_rule():
    # tuning.cc:446: LL128 starts at 2 ("enabled only in certain cases"); parseList sets a named (or not
    # excluded) protocol to 1, and tuning.cc:518 runs the path rule only for 2
    far = get_system("dgx-h100", nodes=2).with_(nic_path="SYS")
    assert ("tree", "LL128") not in tuning_table("allreduce", far).enabled()
    assert ("tree", "LL128") in tuning_table("allreduce", far.with_(nccl_proto="LL128")).enabled()
    assert ("tree", "LL128") in tuning_table("allreduce", far.with_(nccl_proto="^LL")).enabled()


@pytest.mark.parametrize(
    "cluster, path, ll128",
    [
        ("dgx-h100", "PXN", True),  # tuning.cc:521-522: sm90+ typeInter <= PATH_PXN
        ("dgx-h100", "PHB", False),
        ("dgx-a100", "PXB", True),  # tuning.cc:524-525: below sm90 typeInter <= PATH_PXB
        ("dgx-a100", "PXN", False),
    ],
)
def test_nic_path_flag_drives_the_ll128_rule(cluster, path, ll128):
    hw = HardwareSpec(cluster=cluster, nodes=2, nic_path=path)
    assumed, _ = api.predict_nccl(collective="allreduce", size="1M", hardware=hw)
    assert assumed.system.nic_path == path
    assert (("ring", "LL128") in tuning_table("allreduce", assumed.system).enabled()) == ll128


def test_cpu_arch_switches_the_nvls_tree_correction():
    # tuning.cc:643-644: nvls-tree's bandwidth is corrected only with minCompCap >= 100 and an x86 CPU
    size = 4 << 20
    log_size = int(np.log2(size >> 6))  # 16
    factor = C.TREE_CORRECTION[C.PROTOCOLS.index("Simple")][log_size]
    assert factor == 0.7  # tuning.cc treeCorrectionFactor[Simple][16]
    times = {}
    for arch in ("x86", "arm"):
        hw = HardwareSpec(cluster="dgx-b200", nodes=2, cpu_arch=arch, algo="NVLSTree")
        _, pred = api.predict_nccl(collective="allreduce", size=[size], hardware=hw)
        times[arch] = pred.bandwidth_s[0]
    assert times["arm"] == pytest.approx(times["x86"] * factor, rel=1e-12)


def test_grace_systems_are_arm_in_the_catalogue():
    assert get_system("gb200-nvl72").cpu_arch == "arm" and get_system("gb300-nvl72").cpu_arch == "arm"
    assert get_system("dgx-b200").cpu_arch == "x86"


@pytest.mark.parametrize("flag, value", [("--cpu-arch", "sparc"), ("--nic-path", "PXQ"), ("--algo", "Bruck")])
def test_bad_values_exit_2_with_the_flag(capsys, monkeypatch, flag, value):
    code, err = _main(capsys, monkeypatch, "--cluster", "dgx-h100", "--nodes", "2", "--size", "64K", flag, value)
    assert code == 2 and flag in err and value in err


def test_the_flags_need_nccl(capsys, monkeypatch):
    monkeypatch.setattr(
        "sys.argv", ["collperf", "predict", "allreduce", "--cluster", "dgx-h100", "--nodes", "2", "--proto", "LL"]
    )
    with pytest.raises(SystemExit) as stop:
        main()
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "--proto" in err and "--nccl" in err


def test_spec_checks_without_the_cli():
    with pytest.raises(UsageError, match="--algo"):
        HardwareSpec(cluster="dgx-h100", algo="Ring;Tree")
    assert (
        select("allreduce", [1 << 20], get_system("dgx-h100", 2).with_(nccl_algo="^NVLSTree,Tree")).algorithm[0]
        == "ring"
    )


def test_a_logs_nccl_algo_and_proto_echoes_are_applied(tmp_path):
    # tuning.cc:455, 460: NCCL echoes "NCCL_PROTO/NCCL_ALGO set by environment to %s"; the flags win over them
    table = _log(
        tmp_path,
        [
            "nodeA:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring",
            "nodeA:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL128",
        ],
    )
    system = assume(table).system
    assert (system.nccl_algo, system.nccl_proto) == ("Ring", "LL128")
    assert "NCCL_ALGO set by environment" in system.provenance["nccl_algo"]
    assert assume(table, HardwareSpec(algo="Tree")).system.nccl_algo == "Tree"
