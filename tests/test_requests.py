"""A request chooses its mode: predict_request and simulate_request return the spec of the mode asked for and hold
the refusals between modes, so a Python caller meets them as the CLI's user does; api.predict and api.simulate
dispatch on the spec's type."""

import pytest
from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.errors import UsageError
from collperf.model.hardware.catalogue import CATALOGUE
from collperf.spec import (
    NcclPredictSpec,
    NetworkSpec,
    PatternSpec,
    PredictSpec,
    SimulateSpec,
    TopologyPredictSpec,
    predict_request,
    simulate_request,
)

H100 = NetworkSpec(cluster="dgx-h100", nodes=2)


def test_predict_request_returns_the_spec_of_the_mode_asked_for():
    plain = predict_request(
        collective="allreduce", size="1M", ranks="8", network=NetworkSpec(latency="5us", bandwidth="50GB/s")
    )
    assert type(plain) is PredictSpec and plain.network.ranks == 8 and not plain.expected
    assert predict_request(collective="allreduce", network=H100).expected  # a catalogue system: its band too
    topo = predict_request(
        collective="allreduce",
        topology="switch:4",
        algorithm="ring",
        ranks="0,1,2,3",
        network=NetworkSpec(latency="1us", bandwidth="10GB/s"),
    )
    assert type(topo) is TopologyPredictSpec and topo.ranks == [0, 1, 2, 3]
    nccl = predict_request(collective="allreduce", size="1G", nccl=True, proto="Simple", network=H100)
    assert type(nccl) is NcclPredictSpec and nccl.hardware.nodes == 2 and nccl.hardware.proto == "Simple"


def test_api_predict_dispatches_on_the_spec():
    topo = api.predict(
        predict_request(
            collective="allreduce",
            size="1M",
            topology="switch:4",
            algorithm="ring",
            network=NetworkSpec(latency="1us", bandwidth="10GB/s"),
        )
    )
    assert isinstance(topo, api.TopologyPrediction) and topo.algorithm == "ring"
    # ring on 4 ranks over a 1 us, 10 GB/s link: 2 (p-1) steps of 1 us + 2 (p-1)/p x 1 MiB / 10 GB/s
    (ring,) = topo.predictions[0].algorithms
    assert ring.name == "ring" and ring.time_s == pytest.approx(6e-6 + 1.5 * (1 << 20) / 10e9)
    assert isinstance(
        api.predict(predict_request(collective="allreduce", size="1G", nccl=True, network=H100)), api.NcclChoice
    )


@pytest.mark.parametrize(
    "given, words",
    [
        (dict(proto="LL"), "--proto describes what NCCL sees: it applies to predict --nccl"),
        (dict(nccl=True, topology="dgx1v"), "--nccl prices NCCL on a catalogue system (--cluster): drop --topology"),
        (dict(sharp=False, topology="dgx1v"), "--no-sharp describes a catalogue system's InfiniBand switches"),
        (
            dict(nccl=True, network=NetworkSpec(latency="5us", bandwidth="50GB/s", ranks=8)),
            "predict --nccl needs a system",
        ),
        (dict(root=1), "--root go with --topology"),
        (dict(topologgy="dgx1v"), "predict: unknown option 'topologgy': did you mean topology?"),
    ],
)
def test_predict_request_refuses_what_one_mode_gives_another(given, words):
    with pytest.raises(UsageError) as e:
        predict_request(collective="allreduce", **given)
    assert str(e.value).startswith(words)


def test_the_refusal_lists_the_catalogues_systems():
    with pytest.raises(UsageError) as e:
        predict_request(collective="allreduce", nccl=True)
    assert all(name in str(e.value) for name in CATALOGUE) and "collperf systems" in str(e.value)


def test_simulate_request_returns_a_pattern_or_a_schedule():
    pattern = simulate_request(pattern="chain-forward", topology="dgx1v", mode="rounds")
    assert type(pattern) is PatternSpec and (pattern.size, pattern.segments) == ("1M,16M,256M", 32)
    assert simulate_request(pattern="chain-forward", size="1M", segments=4).segments == 4
    plain = simulate_request(collective="allreduce", algorithm="ring", topology="ring:4")
    assert type(plain) is SimulateSpec and plain.size == "1G"


@pytest.mark.parametrize(
    "given, words",
    [
        (
            dict(pattern="chain-forward", collective="allreduce", timeline="t.png"),
            "--pattern chain-forward sets its own schedule: drop COLLECTIVE, --timeline",
        ),
        (dict(algorithm="ring", topology="ring:4"), "give a COLLECTIVE and -A ALGORITHM (or --pattern NAME)"),
        (
            dict(collective="allreduce", algorithm="ring", topology="ring:4", center=0),
            "--gpus, --center, --successor and --source describe a --pattern: add --pattern NAME",
        ),
    ],
)
def test_simulate_request_refuses_what_one_mode_gives_another(given, words):
    with pytest.raises(UsageError) as e:
        simulate_request(**given)
    assert str(e.value) == words


def test_the_cli_meets_the_same_refusals():
    result = CliRunner().invoke(app, ["simulate", "-t", "dgx1v", "--pattern", "chain-forward", "-A", "ring"])
    assert isinstance(result.exception, UsageError) and str(result.exception).endswith("own schedule: drop -A")
