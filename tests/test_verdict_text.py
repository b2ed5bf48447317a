"""What a user reads from diagnose and predict: the band's provenance said once, a verdict its findings agree
with, what to check first read from the log itself, hardware inferred only from what the log names, and JSON
that carries what the text shows, sizes with their unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from collperf.cli import app
from collperf.diagnose import findings as F
from collperf.diagnose.verdict import Kind, Verdict
from collperf.diagnose.core import SizeVerdict, overall
from collperf.diagnose.overall import curve_anomalies as _curve_anomalies
from collperf.diagnose.corpus_fit import hardware_for, read_index
from collperf.expect.resolve import Assumed, assume
from collperf.expect.wording import merge_counts
from collperf.ingest import load
from collperf.units import size_ranges
from collperf.model.hardware.catalogue import get_system
from collperf.spec import HardwareSpec
from log_support import synthetic_log

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CORPUS = Path(__file__).resolve().parent.parent / "src" / "collperf" / "data" / "corpus"
runner = CliRunner()


# ---- many sizes in one line ------------------------------------------------------------------------------


def test_sizes_consecutive_in_the_log_are_one_range():
    every = [KIB << k for k in range(0, 24)]  # 1 KiB .. 8 GiB, the log's sizes
    chosen = [KIB, 2 * KIB, 4 * KIB, 64 * KIB, 128 * KIB, 8 * GIB]
    assert size_ranges(chosen, every) == "1 KiB-4 KiB, 64 KiB, 128 KiB, 8 GiB"  # two neighbours: themselves
    assert size_ranges(every, every) == "1 KiB-8 GiB"
    assert size_ranges([KIB, 4 * KIB]) == "1 KiB, 4 KiB"  # without the log's sizes nothing merges


def test_the_bands_provenance_is_said_once_with_the_range_of_each_count():
    per_size = [
        "calibrated on 5 public runs of this fabric class (ib) from 5 sources",
        "calibrated on 7 public runs of this fabric class (ib) from 5 sources",
        "calibrated on 15 public runs of this fabric class (ib) from 8 sources",
        "calibrated on 15 public runs of this fabric class (ib) from 8 sources",
    ]
    assert merge_counts(per_size) == (
        "calibrated on 5-15 public runs of this fabric class (ib) from 5-8 sources, by size"
    )
    assert merge_counts(per_size[2:]) == "calibrated on 15 public runs of this fabric class (ib) from 8 sources"
    # two shapes: each with the sizes it applies to
    mixed = merge_counts(
        ["not calibrated: too few public runs near this size", per_size[0], per_size[1]], [8, MIB, 2 * MIB]
    )
    assert mixed == (
        "not calibrated: too few public runs near this size (at 8 B); calibrated on 5-7 public runs of "
        "this fabric class (ib) from 5 sources, by size (at 1 MiB, 2 MiB)"
    )


def test_a_log_says_its_band_provenance_once(tmp_path):
    res = runner.invoke(app, ["diagnose", str(EXAMPLES / "14_h100-ib400-2node-16gpu-allreduce.txt"), "--json"])
    assert res.exit_code == 0, res.output
    (doc,) = json.loads(res.output) if isinstance(json.loads(res.output), list) else [json.loads(res.output)]
    assert doc["expected_from"].count("calibrated on") == 1
    assert doc["band_from"].startswith("calibrated on") and doc["band_from"] in doc["expected_from"]
    assert doc["verdict_label"] == "as expected" and doc["verdict"].startswith("as expected: ")
    counts = {s["band_logs"] for s in doc["sizes"] if s["band_logs"]}
    assert len(counts) > 1  # several counts over the sizes: said as their range
    assert f"{min(counts)}-{max(counts)} public runs" in doc["band_from"]


# ---- the verdict and its findings agree ------------------------------------------------------------------


def _slow_rows(mid: float, plateau: float, logs: int = 10) -> list[SizeVerdict]:
    """1 MiB .. 1 GiB against a slow edge of 1 ms each: the mid sizes (below 1 GiB / 16) `mid` x beyond it, the
    plateau (64 MiB .. 1 GiB) `plateau` x."""
    rows = []
    for k in range(20, 31):
        ratio = plateau if (1 << k) >= GIB // 16 else mid
        rows.append(
            SizeVerdict(
                1 << k,
                ratio * 1e-3,
                0.8e-3,
                None,
                None,
                None,
                "bandwidth",
                Verdict(Kind.SLOWER, f"slower than expected by {ratio - 1:.0%}"),
                expected_high_s=1e-3,
                expected_low_s=0.7e-3,
                band_logs=logs,
            )
        )
    return rows


def test_slow_only_at_the_mid_sizes_is_the_slow_end_and_slower_overall_says_so():
    rows = _slow_rows(mid=3.0, plateau=1.2)
    # beyond = min(median of all 11 = 3.0, median of the plateau's 5 = 1.2) = 1.2, under the margin of a band on
    # 10 runs, 1.3 x (1 + 1/10) = 1.43: as expected at the slow end; the worst mid size 3x beyond is named
    verdict = overall(rows, [])
    assert verdict.text.startswith("as expected, at the slow end of healthy runs: 11 of 11 bandwidth-bound sizes")
    assert "by 20% (median; a band on 10 runs calls a log slower from 43%)" in verdict.text
    assert "the mid sizes are slower: up to 3.00x the band's slow edge at 1 MiB" in verdict.text
    assumed = Assumed(None, [("NIC rate", "400 Gb/s", "default for dgx-h100")])
    (found,) = F.slower_overall(rows, assumed, verdict)
    # the same yardstick as the rows (the band's slow edge, not the typical time) and no alarm the verdict denies
    assert found.severity == "info" and "median 3.00x its slow edge" in found.message
    assert "so the log is as expected, at the slow end" in found.message
    assert "mid sizes (1 MiB-32 MiB: up to 3.00x the slow edge at 1 MiB)" in found.message
    assert "NIC rate 400 Gb/s" in found.message


def test_slow_mid_sizes_over_a_plateau_inside_the_band_say_so_not_a_negative_excess():
    rows = _slow_rows(mid=3.0, plateau=0.8)
    for v in rows[6:]:  # 64 MiB .. 1 GiB at 0.8 ms, inside the band 0.7-1 ms
        v.verdict = Verdict(Kind.AS_EXPECTED, "as expected")
    # six of eleven sizes slower; beyond = min(median of all 11 = 3.0, median of the plateau = 0.8) = 0.8
    verdict = overall(rows, [])
    assert verdict.text.startswith(
        "as expected, at the slow end of healthy runs: 6 of 11 bandwidth-bound sizes "
        "above the band of healthy public runs, but the largest sizes are within it"
    )
    assert "-20%" not in verdict.text and "up to 3.00x the band's slow edge at 1 MiB" in verdict.text


def test_one_slow_size_at_the_plateau_is_named_as_itself():
    rows = _slow_rows(mid=1.2, plateau=1.2)
    rows[-1].time_s = 3e-3  # 1 GiB 3x beyond its slow edge, the rest 1.2x: still the slow end
    verdict = overall(rows, [])
    assert verdict.kind is Kind.SLOW_END and verdict.text.endswith(
        "; 1 GiB is slower: 3.00x the band's slow edge (see the findings)"
    )


def test_slow_at_the_plateau_is_slower_and_slower_overall_warns():
    rows = _slow_rows(mid=2.0, plateau=2.0)
    verdict = overall(rows, [])
    assert verdict.text.startswith("slower than expected: 11 of 11 bandwidth-bound sizes above the band")
    (found,) = F.slower_overall(rows, Assumed(None, []), verdict)
    assert found.severity == "warning" and "median 2.00x its slow edge" in found.message
    assert "mid sizes" not in found.message


# ---- what to check first, read from the log -------------------------------------------------------------

NICS8 = "nodeA:1:2 [0] NCCL INFO NET/IB : Using " + " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(8))


def test_gpudirect_rdma_off_in_the_log_is_named_first_with_its_line(tmp_path):
    staged = "nodeA:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/1"
    table = synthetic_log(tmp_path, [NICS8, staged])
    what, line = assume(table).suspects[0]
    assert what.startswith("GPUDirect RDMA is not used") and line == staged
    res = runner.invoke(app, ["diagnose", table.source], terminal_width=250)
    assert res.exit_code == 0, res.output
    assert "check first (read from this log):" in res.output and "via NET/IB/1" in res.output
    doc = json.loads(runner.invoke(app, ["diagnose", table.source, "--json"]).output)
    doc = doc[0] if isinstance(doc, list) else doc
    assert doc["system"]["check_first"][0]["log_line"] == staged


def test_fewer_nics_than_the_system_has_and_forced_settings_are_named(tmp_path):
    one = "nodeA:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB"
    gdr = "nodeA:1:2 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to SYS"
    kept = "nodeA:1:2 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 0."
    suspects = dict((line, what) for what, line in assume(synthetic_log(tmp_path, [one, gdr, kept])).suspects)
    assert suspects[one].startswith("NCCL uses 1 NIC(s) per node where dgx-h100 has 8")
    assert suspects[gdr].startswith("NCCL_NET_GDR_LEVEL=SYS is set") and "nvidia-smi topo -m" in suspects[gdr]
    assert kept not in suspects  # left at NCCL's default: nothing to check
    # the launch line counts too, and a healthy-looking log has nothing to check
    launch = "mpirun -np 16 -x NCCL_MAX_NCHANNELS=4 ./all_reduce_perf -b 8 -e 1G"
    (capped,) = [w for w, _ in assume(synthetic_log(tmp_path, [NICS8, launch])).suspects]
    assert capped.startswith("NCCL_MAX_NCHANNELS=4 is set: ") and "capped at 4" in capped
    assert assume(synthetic_log(tmp_path, [NICS8])).suspects == []


# ---- hardware only from what the log names ----------------------------------------------------------------


def test_roce_alone_names_no_cloud_instance(tmp_path):
    # H100 over RoCE runs on OCI, Google and clusters of one's own: the GPU's own entry, its NIC rate a default
    roce = "nodeA:1:2 [0] NCCL INFO NET/IB : Using " + " ".join(f"[{i}]mlx5_{i}:1/RoCE" for i in range(8))
    system = assume(synthetic_log(tmp_path, [roce])).system
    assert (system.name, system.fabric_class, system.nic_Gbps) == ("dgx-h100", "roce", 400)
    assert system.provenance["nic_Gbps"].startswith("default")


def test_googles_gib_plugin_names_the_google_instance_and_roce(tmp_path):
    launch = (
        "kubectl exec -it nccl-gib-test-0 -- /usr/local/gib/scripts/run_nccl_tests.sh -t all_reduce -b 1M "
        "-e 1G nccl-gib-test-0 nccl-gib-test-1"
    )
    table = synthetic_log(tmp_path, [launch], gpu="NVIDIA B200", hosts=("nccl-gib-test-0", "nccl-gib-test-1"))
    system = assume(table).system
    assert (system.name, system.fabric_class, system.nics_per_node, system.nic_Gbps) == ("gcp-a4", "roce", 8, 400)
    assert launch[:60] in system.provenance["fabric"] and "gIB" in system.provenance["nic_Gbps"]


def test_amd_links_are_called_xgmi():
    mi300x = get_system("mi300x")
    assert f"{mi300x.nvlink_links}x xGMI" in mi300x.describe() and "NVLink" not in mi300x.describe()
    assert "18x NVLink" in get_system("dgx-h100").describe()


# ---- one number, predict --nccl, JSON ---------------------------------------------------------------------

ONE = [
    "diagnose",
    "allreduce",
    "--size",
    "1GB",
    "--time",
    "9ms",
    "--ranks",
    "16",
    "--cluster",
    "dgx-h100",
    "--nodes",
    "2",
]


def test_the_one_number_verdict_says_what_its_ratio_is_measured_from():
    doc = json.loads(runner.invoke(app, ONE + ["--json"]).output)
    high = doc["expected_high_s"]
    # 9 ms against the slow edge: the ratio in the text is 9 ms / the edge, and the edge is quoted beside it
    assert doc["verdict"].startswith(f"slower than expected by {9e-3 / high - 1:.0%} (9 ms vs ")
    assert "the slow edge of healthy public runs'" in doc["verdict"] and doc["verdict_label"] == "slower than expected"
    text = runner.invoke(app, ONE, terminal_width=250).output
    assert "ms) (" not in text and "\n  band:" not in text  # no doubled brackets, provenance said once
    # peers carry their sizes with the unit, as every other size in the document
    assert doc["peers"]["size_bytes"] == 10**9 and all("size_bytes" in s for s in doc["peers"]["sources"])


def test_predict_nccl_shows_the_bound_beside_nccls_model():
    res = runner.invoke(
        app, ["predict", "allreduce", "--nccl", "--cluster", "dgx-h100", "--nodes", "2", "-s", "1GB", "--json"]
    )
    assert res.exit_code == 0, res.output
    # 1e9 B allreduce on 2 nodes of 8 x 400 Gb/s: the node-level bound 2 (N-1)/N x 1e9 B / 400e9 B/s = 2.5 ms
    assert json.loads(res.output)["sizes"][0]["bound_s"] == pytest.approx(2.5e-3)
    text = runner.invoke(
        app,
        ["predict", "allreduce", "--nccl", "--cluster", "dgx-h100", "--nodes", "2", "-s", "1GB"],
        terminal_width=250,
    ).output
    assert "NCCL model" in text and "2.5 ms" in text and "without --nccl" in text


def test_a_log_table_shows_short_verdicts_and_each_cause_once():
    # a known-bad corpus run (2 x 8 H100 over InfiniBand, 9 of its 10 bandwidth-bound sizes above the band)
    log = CORPUS / "h100-ib-2x8-allreduce-gh-nccl-tests-290.txt"
    text = runner.invoke(app, ["diagnose", str(log)], terminal_width=250).output
    # each cause printed once with the sizes it applies to, the table's verdicts without the figures beside them
    assert "slower than expected" in text and "the slow edge of healthy public runs'" not in text
    flat = " ".join(text.split())
    assert flat.count("- the network: fewer NICs") == 1
    # the sizes above the band, 32 MiB up to the largest, consecutive in the log: one range
    assert "adaptive routing [32 MiB-8 GiB]" in flat and "slower than the band at 32 MiB-8 GiB" in flat


def test_a_good_verdict_still_points_at_a_dip():
    # the known-bad EFA run of the corpus: its poster saw busbw drop at 64 MB (32.6 GB/s at 32 MiB, 19.1 at 64 MiB,
    # 30.7 at 128 MiB); the sizes as a whole are within the band, and the verdict line says where they are not
    log = CORPUS / "a100-efa-2x8-allreduce-gh-aws-ofi-nccl-65.txt"
    res = runner.invoke(app, ["diagnose", str(log), "--cluster", "aws-p4d", "--nodes", "2", "--json"])
    doc = json.loads(res.output)
    doc = doc[0] if isinstance(doc, list) else doc
    assert doc["verdict_label"] == "as expected"
    assert doc["verdict"].endswith("; but busbw dips at 64 MiB (see the findings)")
    assert [f["sizes_bytes"] for f in doc["findings"] if f["kind"] == "dip"] == [[64 * MIB]]


def test_predicts_band_table_says_its_provenance_once():
    res = runner.invoke(
        app,
        ["predict", "allreduce", "-s", "1M,64M,1G", "--cluster", "dgx-h100", "--nodes", "2", "-A", "ring"],
        terminal_width=250,
    )
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    # one line for the three sizes, each count as its range over them (the JSON keeps band_from per size)
    assert flat.count("calibrated on") == 1 and "band: calibrated on" in flat and ", by size" in flat
    doc = json.loads(
        runner.invoke(
            app,
            [
                "predict",
                "allreduce",
                "-s",
                "1M,64M,1G",
                "--cluster",
                "dgx-h100",
                "--nodes",
                "2",
                "-A",
                "ring",
                "--json",
            ],
        ).output
    )
    per_size = [d["nccl_expected"]["band_from"] for d in doc]
    assert all(b.startswith("calibrated on") for b in per_size) and doc[0]["nccl_expected"]["size_bytes"] == MIB


def test_a_dip_is_added_to_a_good_verdict_with_one_but():
    dip = F.Finding("dip", "warning", "busbw dips", [64 << 20])
    plain = _curve_anomalies(
        Verdict(Kind.AS_EXPECTED, "as expected: 10 of 10 bandwidth-bound sizes within the band"), [dip]
    )
    assert plain.text.endswith("; but busbw dips at 64 MiB (see the findings)")
    said = _curve_anomalies(
        Verdict(
            Kind.SLOW_END,
            "as expected, at the slow end of healthy runs: ...; 1 GiB is "
            "slower: 3.00x the band's slow edge (see the findings)",
        ),
        [dip],
    ).text
    assert said.endswith("(see the findings); and busbw dips at 64 MiB (see the findings)") and "; but" not in said
    slower = Verdict(Kind.SLOWER, "slower than expected: 3 of 3 sizes")
    assert _curve_anomalies(slower, [dip]) == slower


# ---- what is not a thing to check ------------------------------------------------------------------------


def _said(tmp_path, lines, **kw):
    a = assume(synthetic_log(tmp_path, lines, **kw))
    return [w for w, _ in a.suspects], [w for w, _ in a.settings], a


def test_gdr_settings_are_judged_by_their_level_legacy_numbers_decoded(tmp_path):
    for value, level in (("LOC", "LOC"), ("0", "LOC"), ("3", "PHB"), ("PHB", "PHB"), ("4", "SYS"), ("5", "SYS")):
        check, settings, _ = _said(tmp_path, [NICS8, f"mpirun -np 16 -x NCCL_NET_GDR_LEVEL={value} ./all_reduce_perf"])
        if level == "LOC":
            assert (
                check
                == [
                    f"NCCL_NET_GDR_LEVEL={value} is set: GPUDirect RDMA is turned off: network data is "
                    "staged through host memory"
                ]
                and settings == []
            )
        elif level == "SYS":
            assert len(check) == 1 and "across the CPU sockets' link" in check[0]
        else:  # PHB, what AMD's RCCL guides set: the same NUMA node, nothing to check
            assert check == [] and settings == [f"NCCL_NET_GDR_LEVEL={value}"]


def test_settings_a_guide_sets_on_purpose_are_listed_not_flagged(tmp_path):
    lines = [
        NICS8,
        "mpirun -x NCCL_P2P_PXN_LEVEL=0 -x NCCL_SHM_DISABLE=1 -x NCCL_MIN_NCHANNELS=4 "
        "-x NCCL_SOCKET_NTHREADS=2 ./all_reduce_perf",
    ]
    check, settings, _ = _said(tmp_path, lines)
    assert check == []
    # SHM off does nothing where NVLink peer-to-peer runs; a minimum can only raise the channel count; the socket
    # transport's threads are not read over InfiniBand at all
    assert settings == ["NCCL_SHM_DISABLE=1", "NCCL_MIN_NCHANNELS=4", "NCCL_P2P_PXN_LEVEL=0"]


def test_no_gpudirect_check_on_hardware_without_it_and_any_gdrdma_line_counts(tmp_path):
    staged = "nodeA:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/1"
    check, _, a = _said(tmp_path, [NICS8, staged])
    assert check[0].startswith("GPUDirect RDMA is not used")
    # sends without it, receives with it: GPUDirect RDMA is used (for receives)
    send = "nodeA:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/1"
    recv = "nodeA:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/1/GDRDMA"
    check, _, a = _said(tmp_path, [NICS8, send, recv])
    assert a.system.net_gdr and not any("GPUDirect" in w for w in check)
    # a g4dn has no GPUDirect RDMA to turn on: its staged line is no thing to check
    efa = "nodeA:1:2 [0] NCCL INFO NET/OFI Selected Provider is efa (found 1 nics)"
    table = synthetic_log(tmp_path, [efa, staged], gpu="Tesla T4")
    a = assume(table, HardwareSpec(cluster="aws-g4dn-12xlarge", nodes=4))  # 16 ranks, 4 T4 per node
    assert not any("GPUDirect" in w for w, _ in a.suspects)


def test_gib_asked_for_but_nccl_on_sockets_is_said_as_a_fallback(tmp_path):
    launch = "kubectl exec -it nccl-gib-test-0 -- /usr/local/gib/scripts/run_nccl_tests.sh -t all_reduce -b 1K -e 8G"
    sockets = [
        "nccl-gib-test-0:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>",
        "nccl-gib-test-0:1:2 [0] NCCL INFO Using network Socket",
    ]
    check, _, a = _said(tmp_path, [launch] + sockets, gpu="NVIDIA B200", hosts=("nccl-gib-test-0", "nccl-gib-test-1"))
    assert a.system.fabric_class == "socket"
    assert check[0].startswith("NCCL fell back to TCP sockets although the gib plugin was asked for")
    assert not any("NCCL_IB_HCA" in w for w in check)  # no NIC-count advice for sockets
    # the plugin's own INFO line: NCCL runs on it
    check, _, a = _said(
        tmp_path,
        [launch, "nccl-gib-test-0:1:2 [0] NCCL INFO NET/gIB : Initializing gIB v1.0.6"],
        gpu="NVIDIA B200",
        hosts=("nccl-gib-test-0", "nccl-gib-test-1"),
    )
    assert a.system.fabric_class == "roce" and a.system.name == "gcp-a4" and check == []


def test_launch_variables_are_read_from_launch_lines_only(tmp_path):
    for line in (
        'echo "tip: try NCCL_P2P_DISABLE=1 if it hangs"',
        "# NCCL_P2P_DISABLE=1 was removed from the job",
        "export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-1}",
        "see https://example.org/run?NCCL_P2P_DISABLE=1",
    ):
        check, settings, _ = _said(tmp_path, [NICS8, line])
        assert not any("P2P_DISABLE" in w for w in check + settings), line
    check, _, _ = _said(tmp_path, [NICS8, "# mpirun -np 16 -x NCCL_P2P_DISABLE=1 ./all_reduce_perf"])
    assert check == [
        "NCCL_P2P_DISABLE=1 is set: GPUs of a node exchange data through host memory instead of "
        "NVLink/PCIe peer-to-peer"
    ]


def test_a_dip_at_a_latency_bound_size_is_not_added_to_the_verdict():
    def row(size, regime):
        return SizeVerdict(
            size_bytes=size,
            time_s=1e-3,
            expected_s=1e-3,
            bound_s=None,
            busbw_GBps=None,
            efficiency=None,
            regime=regime,
            verdict=Verdict(Kind.AS_EXPECTED, "as expected"),
        )

    rows = [row(512 << 10, "latency"), row(1 << 20, "latency"), row(64 << 20, "bandwidth")]
    early = F.Finding("dip", "warning", "512 KiB takes longer than 1 MiB", [512 << 10])
    good = Verdict(Kind.AS_EXPECTED, "as expected: 1 of 1")
    assert _curve_anomalies(good, [early], rows) == good
    late = F.Finding("dip", "warning", "busbw dips", [64 << 20])
    assert _curve_anomalies(good, [late], rows).text.endswith("; but busbw dips at 64 MiB (see the findings)")


@pytest.mark.parametrize(
    "log_id",
    [
        "t4-efa-2x1-allreduce-gh-eks-blueprints",  # g4dn: no GPUDirect RDMA
        "mi300x-roce-2x8-allreduce-gh-hisohara-aac10",  # NCCL_NET_GDR_LEVEL=3 (PHB)
        "h100-tcpx-2x8-allgather-gh-cluster-toolkit-a3high",  # TCPX's NCCL_P2P_PXN_LEVEL=0
        "l40s-roce-2x2-allreduce-gh-schmaustech-nvidia-tools",
    ],
)  # NCCL_NET_GDR_READ=1
def test_healthy_public_runs_with_settings_set_on_purpose_have_nothing_to_check(tmp_path, log_id):
    corpus = Path(__file__).resolve().parents[1] / "src" / "collperf" / "data" / "corpus"
    (row,) = [r for r in read_index(corpus) if r["id"] == log_id]
    log = tmp_path / "run.txt"  # without the corpus's two curated header lines, as the run printed it
    log.write_text((corpus / f"{log_id}.txt").read_text().split("\n", 2)[2])
    (table, *_) = load(log)
    assert row["health"] == "healthy"
    assert assume(table, hardware_for(row)).suspects == []
