"""The training-step planner: plan (and --compare, --search)."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api
from collperf.cli import render
from collperf.cli.options import (InterAlg, IntraAlg, Json, app, network_options)
from collperf.cli.render import print_json
from collperf.spec import NetworkSpec


@app.command("plan")
@network_options(exclude=("ranks", "latency", "bandwidth", "reduce_bandwidth", "cluster"))
def plan_command(
    model: str = typer.Option("70b", "--model", help="Preset: 7b, 13b, 70b (or --params/--layers/--hidden/--seq-len)."),
    params: Optional[float] = typer.Option(None, "--params", help="Parameters, e.g. 70e9."),
    layers: Optional[int] = typer.Option(None, "--layers"), hidden: Optional[int] = typer.Option(None, "--hidden"),
    seq_len: Optional[int] = typer.Option(None, "--seq-len"),
    micro_batch: Optional[int] = typer.Option(None, "--micro-batch", help="Sequences per micro-batch."),
    dtype_bytes: Optional[int] = typer.Option(None, "--bytes", help="Bytes per parameter, gradient and activation."),
    tp: int = typer.Option(1, "--tp"), pp: int = typer.Option(1, "--pp"), dp: int = typer.Option(1, "--dp"),
    zero: int = typer.Option(0, "--zero", help="ZeRO stage 0-3."),
    sp: bool = typer.Option(False, "--sp/--no-sp", help="Sequence parallelism (TP as allgather + reducescatter)."),
    micro_batches: int = typer.Option(1, "--micro-batches", help="Micro-batches per step (per DP replica)."),
    bucket: str = typer.Option("25MB", "--bucket", help="DP gradient bucket size."),
    placement: str = typer.Option("tp-pp-dp", "--placement", help="Dimensions innermost first."),
    compute: Optional[str] = typer.Option(None, "--compute", help="Compute time per step, e.g. 2000ms."),
    flops: Optional[str] = typer.Option(None, "--flops", help="Achieved FLOP/s per rank, e.g. 400TFLOPS."),
    overlap: Optional[str] = typer.Option(None, "--overlap", help="Fractions hidden by compute, e.g. dp=0.8,tp=0."),
    algorithm: str = typer.Option("best", "--algorithm", "-A", help="Algorithm for every collective, or best."),
    compare: Optional[list[str]] = typer.Option(None, "--compare", help="Another layout or cluster to set beside: "
                                                "8x4x16, tp=8,pp=8,dp=8,zero=3, or 8x8x8@dgx-a100:64."),
    as_json: bool = Json, cluster: Optional[str] = typer.Option("dgx-h100", "--cluster", help="Cluster preset."),
    intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg, network: NetworkSpec = None,
):
    """Plan one training step's communication (TP, PP, DP, ZeRO) on a cluster, with overlap."""
    spec = api.plan_spec(model, dict(params=params, layers=layers, hidden=hidden, seq_len=seq_len,
                                     micro_batch=micro_batch, dtype_bytes=dtype_bytes),
                         dict(tp=tp, pp=pp, dp=dp, zero=zero, sequence_parallel=sp, micro_batches=micro_batches,
                              bucket=bucket, placement=placement),
                         network, cluster, compute=compute, flops=flops, overlap=overlap, algorithm=algorithm,
                         intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm)
    plans, best = api.plan_compare(spec, compare or [])
    if as_json:
        docs = [p.to_json() for p in plans]
        print_json(docs[0] if len(docs) == 1 else {"plans": docs, "fastest": best})
    else:
        render.print_plans(plans, best)
