"""Plots (matplotlib, headless): PNG or SVG by the file's suffix."""

from __future__ import annotations

from pathlib import Path

from collperf.errors import UsageError


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_timeline(result, schedule, path) -> None:
    """One bar per step from its start to its end (the simulator's timeline)."""
    if Path(path).suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"timeline file {path!r}: expected a .png or .svg name")
    plt = _pyplot()
    steps = len(result.step_start_s)
    fig, ax = plt.subplots(figsize=(9, max(2.5, min(12, 0.25 * steps + 1.5))))
    scale = 1e3
    ax.barh(
        range(steps),
        (result.step_end_s - result.step_start_s) * scale,
        left=result.step_start_s * scale,
        color="tab:blue",
    )
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("step")
    ax.invert_yaxis()
    ax.set_title(
        f"{schedule.collective} {schedule.algorithm}, {schedule.ranks} ranks, {result.mode} mode: "
        f"{result.time_s * scale:.3f} ms"
    )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_diagnosis(diag, path) -> None:
    """Time vs size (log-log) with the fitted model, NCCL's expected time and the lower bound; busbw vs
    size with the bound's busbw line and the fitted regimes shaded."""
    if Path(path).suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"plot file {path!r}: expected a .png or .svg name")
    plt = _pyplot()
    sizes = [s.size_bytes for s in diag.sizes]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 8), sharex=True)
    top.loglog(sizes, [s.time_s * 1e6 for s in diag.sizes], "o", ms=4, label="measured")
    if all(s.fitted_s for s in diag.sizes):
        top.loglog(sizes, [s.fitted_s * 1e6 for s in diag.sizes], "-", label="fitted model")
    if all(s.expected_s for s in diag.sizes):
        top.loglog(sizes, [s.expected_s * 1e6 for s in diag.sizes], "--", label="NCCL expected")
    if all(s.bound_s for s in diag.sizes):
        top.loglog(sizes, [max(s.bound_s, 1e-12) * 1e6 for s in diag.sizes], ":", label="lower bound")
    top.set_ylabel("time (us)")
    top.legend()
    top.set_title(f"{diag.table.collective}, {diag.table.ranks} ranks: {Path(diag.table.source).name}")
    bus = [(s.size_bytes, s.busbw_GBps) for s in diag.sizes if s.busbw_GBps is not None]
    bottom.semilogx([b[0] for b in bus], [b[1] for b in bus], "o-", ms=4, label="busbw")
    if diag.peak_GBps:
        bottom.axhline(diag.peak_GBps, color="tab:red", ls="--", label=f"bound {diag.peak_GBps:.1f} GB/s")
    for i, r in enumerate(diag.fit.regimes if diag.fit else []):
        bottom.axvspan(r.from_bytes, r.to_bytes, alpha=0.08 if i % 2 else 0.16, color="tab:green")
    bottom.set_xlabel("size (bytes)")
    bottom.set_ylabel("busbw (GB/s)")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_validation(rows, path) -> None:
    """Predicted / measured per row, by algorithm, against the size."""
    if Path(path).suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"plot file {path!r}: expected a .png or .svg name")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    for key in sorted({(r.collective, r.algorithm) for r in rows}):
        mine = [r for r in rows if (r.collective, r.algorithm) == key]
        ax.semilogx(
            [r.size for r in mine], [r.predicted_s / r.measured_s for r in mine], "o-", ms=4, label=f"{key[0]} {key[1]}"
        )
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("predicted / measured")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
