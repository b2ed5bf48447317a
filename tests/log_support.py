"""What the log-reading tests share: a small nccl-tests allreduce log with device lines and any INFO lines."""

from collperf.ingest import load


def synthetic_log(tmp_path, lines, gpu="NVIDIA H100 80GB HBM3", hosts=("nodeA", "nodeB")):
    """An allreduce log of 8 ranks per host in `hosts`, the given extra lines, and three sizes (1 MiB, 64 MiB,
    1 GiB), read back as its one table."""
    devices = [
        f"#  Rank {r:2d} Group  0 Pid {r} on {hosts[r // 8]} device {r % 8} [0x1b] {gpu}" for r in range(8 * len(hosts))
    ]
    rows = [
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
        "busbw #wrong"
    ] + [
        f"{n:12d} {n // 4:12d}     float     sum      -1  {t:8.1f} 0 0 0 {t:8.1f} 0 0 0"
        for n, t in ((1 << 20, 80.0), (1 << 26, 900.0), (1 << 30, 12000.0))
    ]
    path = tmp_path / "run.txt"
    path.write_text(
        "\n".join(
            [
                "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 64(factor)",
                "# Using devices",
                *devices,
                *lines,
                *rows,
            ]
        )
        + "\n"
    )
    return load(path)[0]
