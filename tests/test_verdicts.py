"""The verdict side: rows judged against NCCL's expected time and the two-level bound, on a
system assumed from the log with the provenance of each value; one measurement judged like a row;
causes named for the context; no efficiency above 100 %; no alarm on healthy samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.diagnose import diagnose, verdict as V
from collperf.errors import UsageError
from collperf.ingest import load, parse
from collperf.spec import HardwareSpec, MeasurementSpec
from collperf.model.nccl import expect

ROOT = Path(__file__).parent.parent
# the public sample logs (the made-up ones of the docs, a multi-run log and an MPI log, are judged in
# tests/test_diagnose_runs.py on their tests/fixtures twins, and their doc blocks run in tests/test_docs.py)
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.txt") if "madeup" not in p.name)
FIXTURES = Path(__file__).parent / "fixtures"
HEALTHY = ("01_", "02_", "09_", "12_", "14_")
runner = CliRunner()
GIB = 1 << 30


def sample(prefix: str) -> Path:
    return next(p for p in EXAMPLES if p.name.startswith(prefix))


def row(d, size):
    return next(s for s in d.sizes if s.size_bytes == size)


# ---- bounds by hand --------------------------------------------------------------------------------


def test_two_level_bound_on_the_2_node_h100_sample_by_hand():
    d = diagnose(load(sample("14_"))[0])
    assert d.assumed.system.name == "dgx-h100" and d.assumed.system.nodes == 2
    big = row(d, 16 * GIB)
    # node-level network bound: allreduce moves 2 (N-1)/N x size over each node's 8 x 400 Gb/s = 400 GB/s
    network_s = 16 * GIB * 2 * (2 - 1) / 2 / 400e9  # 42.95 ms
    # intra-node with NVLS (in-switch reduction): (g-1)/g x size over 450 GB/s = 33.4 ms: the network binds
    intra_s = 16 * GIB * 7 / 8 / 450e9
    assert intra_s < network_s
    assert big.bound_s == pytest.approx(network_s) and big.binding == "network"
    assert big.efficiency == pytest.approx(network_s / 68.65e-3, rel=1e-3)  # 62.6 %, not 160 %
    # busbw can reach 1.875 x 400 GB/s = 750 GB/s; the log's best is 469.21
    assert d.peak_GBps == pytest.approx(750.0)
    assert max(s.busbw_GBps for s in d.sizes) < d.peak_GBps


def test_two_level_bound_on_the_2_node_b200_sample_by_hand():
    d = diagnose(load(sample("19_"))[0])  # no device lines: the GPU from a comment line
    assert d.assumed.system.name == "dgx-b200" and d.assumed.system.nodes == 2
    gpu = next(v for v in d.assumed.values if v[0] == "GPU")
    assert "comment line" in gpu[2]
    big = row(d, 2 * GIB)
    assert big.bound_s == pytest.approx(2 * GIB / 400e9)  # network: 5.369 ms > intra 7/8 x 2 GiB / 900 GB/s
    assert d.peak_GBps == pytest.approx(750.0) and max(s.busbw_GBps for s in d.sizes) < 750.0


def test_a_peak_below_what_the_log_reached_is_an_above_bound_finding_not_937_percent():
    d = diagnose(load(sample("14_"))[0], peak_Bps=50e9)
    assert all(s.efficiency is None or s.efficiency <= 1.0 for s in d.sizes)
    above = [f for f in d.findings if f.kind == "above-bound"]
    assert above and "--peak" in above[0].message and 16 * GIB in above[0].sizes_bytes
    assert row(d, 16 * GIB).verdict.text.startswith("above the bound")
    assert d.verdict.text.startswith("above the bound")


def test_a_nic_rate_override_that_is_too_low_names_the_value_to_check():
    d = diagnose(load(sample("14_"))[0], hardware=HardwareSpec(nic_rate="100Gb/s"))
    nic = next(v for v in d.assumed.values if v[0] == "NIC rate")
    assert nic[1] == "100 Gb/s" and nic[2] == "user override (--nic-rate)"
    above = next(f for f in d.findings if f.kind == "above-bound")
    assert (
        "network bound binds" in above.message and "NIC rate = 100 Gb/s (user override (--nic-rate))" in above.message
    )


# ---- every sample ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name[:2])
def test_every_sample_diagnoses_with_no_flags_and_no_efficiency_above_100(path):
    (d,) = api.diagnose_logs([str(path)])
    assert d.assumed.system is not None and d.assumed.values
    assert all(src for _, _, src in d.assumed.values)  # every value says where it came from
    assert all(s.efficiency is None or 0 < s.efficiency <= 1.0 for s in d.sizes)
    assert all(s.expected_s and s.bound_s for s in d.sizes)
    assert not any("investigate" in s.verdict.text for s in d.sizes)
    assert not any(f.kind == "above-bound" for f in d.findings)
    json.dumps(d.to_json())


@pytest.mark.parametrize("prefix", [p for p in HEALTHY if p != "09_"])
def test_healthy_samples_are_as_expected(prefix):
    d = diagnose(load(sample(prefix))[0])
    assert d.verdict.text.startswith("as expected"), d.verdict
    big = [s for s in d.sizes if s.size_bytes >= 1 << 24]  # the bandwidth-bound end: no alarm at all
    assert all(s.verdict.text.startswith(("as expected", "faster")) for s in big), [s.verdict.text for s in big]


def test_healthy_efa_sample_is_as_expected():
    # once an xfail that passed either way: the band of healthy public runs now holds this T4 + EFA log
    assert diagnose(load(sample("09_"))[0]).verdict.kind is V.Kind.AS_EXPECTED


def test_latency_or_bandwidth_bound_comes_from_the_expected_choice_terms():
    d = diagnose(load(sample("14_"))[0])
    pred = expect("allreduce", [s.size_bytes for s in d.sizes], d.assumed.system)
    assert [s.regime for s in d.sizes] == list(pred.regime)
    assert [s.choice for s in d.sizes] == pred.choice
    assert row(d, 1 << 20).regime == "latency" and row(d, GIB).regime == "bandwidth"
    assert row(d, GIB).choice == "nvls-tree/Simple"


# ---- wrong rows, context causes ------------------------------------------------------------------------


def test_rows_with_wrong_results_get_no_performance_verdict():
    d = diagnose(load(FIXTURES / "wrong_results.txt")[0])
    t = load(FIXTURES / "wrong_results.txt")[0]
    wrong = {r.size for r in t.placement("out-of-place") if r.wrong}
    assert wrong
    for s in d.sizes:
        if s.size_bytes in wrong:
            assert s.wrong and s.verdict.text.startswith("not judged: wrong results")
            assert s.efficiency is None and not s.causes
    assert d.verdict.text.startswith("error")


def _slow_osu_log() -> str:
    lines = ["# OSU MPI Allreduce Latency Test v7.1", "# Size       Avg Latency(us)"]
    lines += [f"{1 << k:<12d}{(1 << k) / 1e3 + 500:.2f}" for k in range(2, 27, 2)]  # 1 GB/s and 500 us: slow
    return "\n".join(lines) + "\n"


def test_mpi_logs_get_mpi_advice_not_nccl_settings():
    (t,) = parse(_slow_osu_log(), "osu.txt", ranks=8)
    d = diagnose(t, hardware=HardwareSpec(cluster="dgx-a100"))
    slow = [s for s in d.sizes if s.verdict.text.startswith("slower")]
    assert slow
    text = " ".join(c for s in slow for c in s.causes)
    assert "MPI" in text and "NCCL_ALGO" not in text and "NCCL_PROTO" not in text


def test_alltoall_gets_alltoall_advice_not_nccl_algo():
    j = api.diagnose_measurement(collective="alltoall", size="1GB", time="1s", ranks=16, cluster="dgx-h100", nodes=2)
    # the band's public runs hold no alltoall, but 1 s is far beyond twice its margin: slower, saying whose band
    assert j.verdict.text.startswith("slower than expected") and j.row.choice == "p2p/Simple"
    assert "the band is from runs of other collectives" in j.verdict.text
    text = " ".join(j.row.causes)
    assert "point-to-point" in text and "NCCL_ALGO=" not in text and "runner-up" not in text


def test_causes_by_context():
    nccl = V.causes("allreduce", "nccl", "bandwidth", 2, "nvls-tree/Simple", "ring/Simple")
    assert any("NCCL_IB_HCA" in c for c in nccl) and any("NCCL_ALGO/NCCL_PROTO set" in c for c in nccl)
    # worded alike whatever NCCL's choice, so the rows of a log share one line each (the choice is in the table)
    assert V.causes("allreduce", "nccl", "bandwidth", 2, "ring/LL128", "ring/Simple") == nccl
    assert not any(
        "NCCL_ALGO/NCCL_PROTO set" in c
        for c in V.causes("allreduce", "nccl", "bandwidth", 2, "ring/Simple", "ring/Simple")
    )
    # one GPU per node: no intra-node path to blame
    assert not any("intra-node" in c for c in V.causes("allreduce", "nccl", "bandwidth", 2, gpus_per_node=1))
    assert not any("NCCL_IB_HCA" in c for c in V.causes("allreduce", "nccl", "bandwidth", 1))  # one node: no NIC
    assert any("launch" in c for c in V.causes("allreduce", "nccl", "latency", 1, "ring/LL"))


# ---- one measured number -------------------------------------------------------------------------------


def test_one_measurement_from_the_api():
    j = api.diagnose_measurement(
        MeasurementSpec(
            collective="allreduce",
            size="1GB",
            time="500ms",
            ranks=16,
            hardware=HardwareSpec(cluster="dgx-h100", nodes=2),
        )
    )
    # 1e9 B allreduce over 2 nodes x 8 x 400 Gb/s: the node-level bound is 1e9 / 400e9 = 2.5 ms
    assert j.row.bound_s == pytest.approx(2.5e-3) and j.row.binding == "network"
    # the efficiency counts the bound's latency too (5 us over the network), as the above-bound call does
    assert j.row.bound_latency_s == pytest.approx(5e-6) and j.row.efficiency == pytest.approx(2.505e-3 / 0.5)
    assert j.verdict.text.startswith("slower than expected by") and j.row.causes
    assert j.row.causes[0] == V.far_off("allreduce")  # 100x off: check the size and time first
    assert j.row.busbw_GBps == pytest.approx(1e9 / 0.5 * 1.875 / 1e9)
    ok = api.diagnose_measurement(
        collective="allreduce", size="1GB", time="4.5ms", ranks=16, cluster="dgx-h100", nodes=2
    )
    assert ok.verdict.text == "as expected" and not ok.row.causes


def test_one_measurement_from_the_cli_text_and_json():
    args = [
        "diagnose",
        "allreduce",
        "--size",
        "1GB",
        "--time",
        "500ms",
        "--ranks",
        "16",
        "--cluster",
        "dgx-h100",
        "--nodes",
        "2",
    ]
    res = runner.invoke(app, args, terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "system assumed: dgx-h100" in res.output and "user override (--nodes)" in res.output
    assert "slower than expected" in res.output and "likely causes" in res.output
    doc = json.loads(runner.invoke(app, args + ["--json"]).output)
    assert doc["bound_s"] == pytest.approx(2.5e-3) and doc["expected_s"] > doc["bound_s"]
    assert doc["verdict"].startswith("slower") and doc["system"]["system"] == "dgx-h100"
    assert {"name": "nodes", "value": "2", "source": "user override (--nodes)"} in doc["system"]["values"]


def test_one_measurement_refusals():
    with pytest.raises(UsageError, match="--ranks"):
        MeasurementSpec(collective="allreduce", size="1GB", time="500ms")
    with pytest.raises(UsageError, match="--time"):
        MeasurementSpec(collective="allreduce", size="1GB", time="0s", ranks=16)
    with pytest.raises(UsageError, match="--ranks 12 does not split evenly over --nodes 5: give --nodes 2"):
        api.diagnose_measurement(collective="allreduce", size="1GB", time="1s", ranks=12, cluster="dgx-h100", nodes=5)
    res = runner.invoke(app, ["diagnose", "allreduce", "--size", "1GB"])
    assert res.exit_code != 0 and "--size and --time" in str(res.exception)


def test_predict_nccl_shows_choice_time_busbw_and_runner_up():
    res = runner.invoke(
        app,
        [
            "predict",
            "allreduce",
            "--nccl",
            "--cluster",
            "dgx-h100",
            "--nodes",
            "2",
            "-p",
            "16",
            "-s",
            "1M,1G",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    big = doc["sizes"][-1]
    assert big["algorithm"] == "nvls-tree" and big["protocol"] == "Simple" and big["runner_up"] == "ring/Simple"
    assert big["busbw_GBps"] == pytest.approx(GIB / big["time_s"] * 1.875 / 1e9)
    assert big["runner_up_time_s"] > big["time_s"]
    text = runner.invoke(
        app, ["predict", "allreduce", "--nccl", "--cluster", "dgx-a100", "-s", "1G"], terminal_width=200
    ).output
    assert "runner-up" in text and "ring/Simple" in text


# ---- hardware options, --peak with --cluster, --model-from ---------------------------------------------


def test_peak_with_cluster_means_cluster_expected_and_peak_bound():
    (d,) = api.diagnose_logs([str(sample("01_"))], peak="300GB/s", network=api.NetworkSpec(cluster="dgx-a100"))
    assert d.bound_from.startswith("given: --peak") and "dgx-a100" in d.expected_from
    big = d.sizes[-1]
    assert big.bound_s == pytest.approx(big.size_bytes * 2 * 7 / 8 / 300e9)


def test_hardware_options_on_the_cli():
    res = runner.invoke(app, ["diagnose", str(sample("14_")), "--no-nvls", "--nics-per-node", "4", "--json"])
    assert res.exit_code == 0, res.output
    values = {v["name"]: v for v in json.loads(res.output)["system"]["values"]}
    assert values["in-switch reduction (NVLS)"]["source"] == "user override (--no-nvls)"
    assert values["NICs per node"]["value"] == "4"
    res = runner.invoke(app, ["diagnose", str(sample("14_")), "--gpu", "H100", "--json"])
    values = {v["name"]: v for v in json.loads(res.output)["system"]["values"]}
    assert values["GPU"] == {
        "name": "GPU",
        "value": "H100",
        "source": "user override (--gpu), taken as the H100 SXM5 80GB",
    }
    assert values["in-switch reduction (NVLS)"]["value"] == "yes"
    # an H100 flag on a log of A100s is no reading of the log: an error naming both
    res = runner.invoke(app, ["diagnose", str(sample("01_")), "--gpu", "H100"])
    assert res.exit_code != 0 and "contradicts the log's device lines" in str(res.exception)
    res = runner.invoke(app, ["diagnose", str(sample("01_")), "--nvls"])
    assert res.exit_code != 0 and "NVLS" in str(res.exception)


def test_model_from_goes_through_the_expectation_model_and_names_the_model_log():
    target = load(sample("02_"))[0]
    alone = diagnose(target)
    d = diagnose(target, model=str(sample("01_")))
    assert d.model_from.endswith(sample("01_").name) and sample("01_").name in d.expected_from
    fit = next(v for v in d.assumed.values if v[0] == "fit")
    assert "fitted to" in fit[2]
    assert [s.choice for s in d.sizes][-1] == "ring/Simple"  # allgather's own NCCL choice
    assert row(d, 8 * GIB).expected_s != row(alone, 8 * GIB).expected_s
    # the bound stays the hardware's (a fit says how NCCL uses it, not that the hardware changed)
    assert row(d, 8 * GIB).bound_s == pytest.approx(row(alone, 8 * GIB).bound_s)
    res = runner.invoke(app, ["diagnose", str(sample("12_")), "--model-from", str(sample("10_"))], terminal_width=200)
    assert res.exit_code == 0 and "model log:" in res.output and sample("10_").name in res.output


def test_a_profile_sets_the_rates_and_says_so(tmp_path):
    profile = tmp_path / "p.json"
    profile.write_text(
        json.dumps(
            {
                "kind": "collperf-profile",
                "nodes": 1,
                "ranks_per_node": 2,
                "intra": {"latency_s": 2e-6, "bandwidth_Bps": 400e9},
                "inter": {"latency_s": 5e-6, "bandwidth_Bps": 100e9},
            }
        )
    )
    d = diagnose(load(sample("14_"))[0], hardware=HardwareSpec(profile=str(profile)))
    values = {label: (value, src) for label, value, src in d.assumed.values}
    assert values["NIC rate"] == ("800 Gb/s", "user override (--profile p.json)")
    assert values["nodes"] == ("2", "from the hosts in the device lines")  # the log's, not the profile's
    # node-level bound: 2 (N-1)/N x 16 GiB over one 100 GB/s path per node
    assert row(d, 16 * GIB).bound_s == pytest.approx(16 * GIB / 100e9)
    # 16 GiB ran in 68.65 ms, faster than that bound: the profile cannot be this machine's
    above = next(f for f in d.findings if f.kind == "above-bound")
    assert "NIC rate = 800 Gb/s (user override (--profile p.json))" in above.message
    assert all(s.efficiency is None or s.efficiency <= 1 for s in d.sizes)
