"""The input CSV of NCCL's tuner-config generator (plugins/tuner/example/scripts/optimize_config.py):
`collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,cost_metric,bandwidth_gbps,
latency_us` (NCCL 2.30 plugins/tuner/example). One table per measured configuration (collective, algorithm,
protocol, channels, nodes, ranks, pipeOps, regBuff); time is latency_us, the time of one call at that size
(lower is better in the script), or size / bandwidth_gbps where a row gives only the bandwidth (the script
needs one of the two; its newest header drops cost_metric, which is not read here).
The tables carry their algorithm, protocol and channels (header nccl_algo, nccl_proto, nccl_channels), so
`collperf export nccl-tuner` reads them like logs run with NCCL_ALGO/NCCL_PROTO forced."""

from __future__ import annotations

import csv

from collperf.ingest import validate as v
from collperf.ingest.table import Grouped, IngestError, Row, Table

HEADER = (
    "collective",
    "size_bytes",
    "algorithm",
    "protocol",
    "channels",
    "nodes",
    "ranks",
    "pipeOps",
    "regBuff",
    "cost_metric",
    "bandwidth_gbps",
    "latency_us",
)
_NAMES = {
    "allreduce": "allreduce",
    "allgather": "allgather",
    "reducescatter": "reducescatter",
    "reduce_scatter": "reducescatter",
    "broadcast": "broadcast",
    "reduce": "reduce",
}


def looks_like(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0].strip().replace(" ", "")
    return first.startswith("collective,size_bytes,algorithm,protocol")


def parse(text: str, source: str, collective: str | None = None) -> list[Table]:
    lines = text.lstrip().splitlines()
    header = [h.strip() for h in lines[0].split(",")]
    missing = [h for h in HEADER[:9] if h not in header]
    if "latency_us" not in header and "bandwidth_gbps" not in header:
        missing.append("latency_us (or bandwidth_gbps)")
    if missing:
        raise IngestError(
            f"{source}, line 1: the header lacks {', '.join(missing)}: expected optimize_config.py's "
            f"columns ({','.join(HEADER)})"
        )
    grouped = Grouped()
    for number, line in enumerate(lines[1:], 2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            (fields,) = csv.reader([line])
            if len(fields) != len(header):
                raise v.BadValue(f"{len(fields)} fields, expected {len(header)}")
            rec = {k: f.strip() for k, f in zip(header, fields)}
            key, row = _row(rec, number)
        except (v.BadValue, csv.Error) as e:
            grouped.skipped.append(f"line {number}: {e}")
            continue
        grouped.table(key, lambda: _table(source, key, collective)).rows.append(row)  # noqa: B023 (called at once)
    return grouped.finish(f"{source}: no readable optimize_config.py CSV rows")


def _table(source: str, key: tuple, collective: str | None) -> Table:
    name, algo, proto, channels, nodes, ranks, pipe, reg = key
    t = Table(
        f"{source} [{name} {algo}/{proto} ch={channels} {nodes}x{ranks}]",
        collective or name,
        ranks if ranks > 0 else None,
        nodes if nodes > 0 else None,
    )
    t.header.update(
        nccl_algo=algo,
        nccl_proto=proto,
        nccl_channels=channels if channels > 0 else None,
        pipe_ops=pipe,
        reg_buff=reg,
        format="optimize_config.py CSV",
    )
    return t


def _row(rec: dict, number: int):
    name = _NAMES.get(rec["collective"].lower())
    if name is None:
        raise v.BadValue(f"collective {rec['collective'][:20]!r}: expected one of {', '.join(sorted(_NAMES))}")
    algo, proto = rec["algorithm"].lower(), rec["protocol"].lower()
    if not algo.replace("_", "").isalnum() or not proto.isalnum():
        raise v.BadValue(f"algorithm/protocol {algo[:20]!r}/{proto[:20]!r} is not a name")
    ints = [v.whole(rec[k], k, -1, v.MAX_RANK) for k in ("channels", "nodes", "ranks", "pipeOps", "regBuff")]
    size = v.size_bytes(rec["size_bytes"])
    if rec.get("latency_us"):
        time_s = v.time_us(rec["latency_us"], "latency_us") * 1e-6
    elif rec.get("bandwidth_gbps"):
        # a row with a bandwidth only (the script needs one of the two): time = size / bandwidth. Read as algbw;
        # were it busbw, every time of one collective and shape would scale alike and the rules not change
        bw = v.bandwidth(rec["bandwidth_gbps"], "bandwidth_gbps")
        if not bw:
            raise v.BadValue(f"bandwidth_gbps {rec['bandwidth_gbps']!r}: expected a rate > 0 (GB/s)")
        time_s = size / (bw * 1e9)
    else:
        raise v.BadValue("neither latency_us nor bandwidth_gbps: expected one of them")
    return (name, algo, proto, *ints), Row(size, time_s, size / time_s / 1e9, line=number)
