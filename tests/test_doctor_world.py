"""`collperf doctor --torchrun` / `--slurm`: Slurm's variables into torch's, hosts by name or by the override,
the model of a world, the report named by host; and (multiprocess) torchrun with 4 hosts of one rank on gloo,
one of them slowed on its CPU, named by the campaign."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from collperf.errors import UsageError
from collperf.lab.doctor.campaign import adaptive, default_groups
from collperf.lab.doctor.contention import round_times_s
from collperf.lab.doctor.plan import Fault, simulated
from collperf.lab.doctor.world import (
    WorldOptions,
    WorldReport,
    delays,
    first_node,
    host_of_rank,
    model_topology,
    parse_options,
    slurm_environment,
)
from cli_support import cli_error


def test_the_first_host_of_a_slurm_hostlist():
    assert first_node("gpu-[003-005,007],cpu1") == "gpu-003"
    assert first_node("node7") == "node7" and first_node("a[10-12]") == "a10" and first_node("n[2,5]x") == "n2x"
    with pytest.raises(UsageError, match="hostlist"):
        first_node(",")


def test_slurm_variables_become_torch_variables_and_their_absence_is_named():
    env = {"SLURM_PROCID": "9", "SLURM_NTASKS": "16", "SLURM_LOCALID": "1", "SLURM_JOB_NODELIST": "dgx[07-08]"}
    assert slurm_environment(env) == {
        "RANK": "9",
        "WORLD_SIZE": "16",
        "LOCAL_RANK": "1",
        "MASTER_ADDR": "dgx07",
        "MASTER_PORT": "29500",
    }
    assert slurm_environment({**env, "MASTER_PORT": "6000"})["MASTER_PORT"] == "6000"
    with pytest.raises(UsageError, match="SLURM_PROCID not set: run it under srun"):
        slurm_environment({k: v for k, v in env.items() if k != "SLURM_PROCID"})


def test_hosts_by_name_or_override_and_the_injected_delays():
    assert host_of_rank({"COLLPERF_DOCTOR_HOST": "host{local_rank}"}, 5, 2) == "host2"
    assert host_of_rank({"COLLPERF_DOCTOR_HOST": "n{rank}"}, 5, 2) == "n5"
    assert host_of_rank({}, 0, 0) == __import__("socket").gethostname()
    assert delays({"COLLPERF_DOCTOR_DELAY": "host2:0.1s, host3:50ms"}) == {"host2": 0.1, "host3": 0.05}
    for bad in ("host2", "host2:soon", ":1s"):
        with pytest.raises(UsageError, match="HOST:DELAY"):
            delays({"COLLPERF_DOCTOR_DELAY": bad})


def test_probe_options_are_checked():
    assert parse_options("size=64M,repeats=7,timeout=30s", 2) == WorldOptions(64 << 20, 7, 30.0, 2)
    assert parse_options(None) == WorldOptions()
    for bad in ("size=huge", "colour=red", "repeats=1", "timeout=0s"):
        with pytest.raises(UsageError, match="--probe"):
            parse_options(bad)


def test_the_world_model_prices_rails_and_nvlink_by_hand():
    # 2 hosts x 2 ranks; one NIC (50 GB/s) per rank, NVLink 9x that within a host
    topo = model_topology([[0, 1], [2, 3]])
    n = 1 << 30
    pair_across = round_times_s(topo, [(0, 2)], n)[0]
    assert pair_across == pytest.approx(n / 50e9)  # a 2-rank ring: n / rate
    assert round_times_s(topo, [(0, 1)], n)[0] == pytest.approx(n / 450e9)
    # two pairs across at once take their own rails: no contention
    assert round_times_s(topo, [(0, 2), (1, 3)], n) == pytest.approx([pair_across] * 2)


def test_the_report_names_components_by_their_hosts():
    groups = default_groups(4, None)
    c = adaptive(4, groups, simulated([Fault("rank", 2)], groups))
    report = WorldReport(
        c, ["a", "b", "c", "d"], [[0], [1], [2], [3]], "gloo", WorldOptions(), 0.9, 10.0, [2.0], 8, 6, 3
    )
    doc = report.to_json()
    accused = {x["component"]: x["verdict"] for x in doc["components"] if x["verdict"] != "healthy"}
    assert accused == {"c": "degraded"}
    assert all(
        e.startswith(("alone c", "recheck c"))
        for e in next(x for x in doc["components"] if x["component"] == "c")["evidence"]
    )
    assert doc["log"][0][2]["hosts"] == ["c"] and doc["world"]["hosts"] == ["a", "b", "c", "d"]


def test_the_command_refuses_what_does_not_go_together(capsys, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    assert "not --plan and --torchrun" in cli_error(capsys, "doctor", "--plan", "--torchrun")
    assert "start it with torchrun" in cli_error(capsys, "doctor", "--torchrun")
    assert "drop --nodes" in cli_error(capsys, "doctor", "--torchrun", "--nodes", "4")
    assert "--probe sets" in cli_error(capsys, "doctor", "--plan", "--nodes", "4", "--probe", "size=1M")
    assert "--html reports" in cli_error(capsys, "doctor", "--plan", "--nodes", "4", "--html", "x.html")


@pytest.mark.multiprocess
@pytest.mark.slow  # about 30 s on 2 cores; the parts above are its quick variant
def test_torchrun_with_four_hosts_names_the_one_slowed_on_its_cpu(tmp_path):
    torchrun = Path(sys.executable).parent / "torchrun"
    env = {
        **os.environ,
        "COLLPERF_DOCTOR_HOST": "host{local_rank}",
        "COLLPERF_DOCTOR_DELAY": "host2:0.1s",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"),
    }
    html = tmp_path / "doctor.html"
    done = subprocess.run(
        [
            str(torchrun),
            "--standalone",
            "--nproc-per-node",
            "4",
            "-m",
            "collperf",
            "doctor",
            "--torchrun",
            "--probe",
            "size=256K,repeats=5,timeout=60s",
            "--json",
            "--html",
            str(html),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["world"]["hosts"] == ["host0", "host1", "host2", "host3"] and doc["world"]["backend"] == "gloo"
    verdicts = {c["component"]: c["verdict"] for c in doc["components"]}
    assert verdicts["host2"] == "degraded"
    assert doc["rounds"] <= doc["round_bound"]
    assert "host2 degraded" in html.read_text()
