"""The report's plots as inline SVG strings: matplotlib renders into memory, nothing touches a file.

Text is left as SVG <text> in the page's own sans-serif font (svg.fonttype 'none'), so the plots stay
small, sharp when printed, and searchable. No string from a log goes into a plot: inputs are labelled
[0], [1], ... and the page says which file each is (matplotlib would parse '$' in a label as math).
"""

from __future__ import annotations

import io
import re

from collperf import units

WIDTH_IN, HEIGHT_IN = 6.0, 3.3
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]


def _figure():
    import matplotlib
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend

    matplotlib.rcParams.update(
        {"svg.fonttype": "none", "svg.hashsalt": "collperf-report", "font.family": "sans-serif", "font.size": 9.5}
    )
    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN))
    return fig, fig.subplots()


def _svg(fig, ident: str) -> str:
    """The figure as an <svg> element for inline use: no XML prolog, DOCTYPE or metadata, ids made
    unique per plot (several matplotlib SVGs in one page would otherwise share clip-path ids)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
    text = re.sub(r'id="([^"]+)"', rf'id="{ident}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{ident}-\1)", text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{ident}-\1"', text)
    # scale with the page: the viewBox keeps the aspect, CSS sets the width
    text = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", text, count=1)
    return text.replace("<svg", f'<svg class="plot" role="img" aria-labelledby="{ident}-title"', 1)


def _size_axis(ax, sizes) -> None:
    """Log2 size axis labelled in nccl-tests' binary units (1 KiB, 1 MiB, ...), a tick every factor 16
    or 4 so that labels never crowd a laptop-width plot."""
    ax.set_xscale("log", base=2)
    lo, hi = min(sizes), max(sizes)
    span = max(1, (hi.bit_length() - lo.bit_length()))
    step = 4 if span > 16 else 2
    ticks = [1 << k for k in range(0, 50, step) if lo / 2 <= (1 << k) <= hi * 2]
    ax.set_xticks(ticks, [units.format_size(t).replace(" ", "\u2009") for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("size (nccl-tests convention)")
    ax.grid(True, which="major", color="#dddddd", lw=0.6)


def _few_decades(ax, values) -> None:
    """Label 1-2-5 ticks on a log axis that spans less than two decades (where matplotlib would label
    one power of ten, or none)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if values and max(values) < 100 * min(values):
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())


def _finish(fig, ax, title: str, ident: str) -> str:
    ax.set_title(title, loc="left", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="best")
    fig.tight_layout()
    svg = _svg(fig, ident)
    return svg.replace(">", f'><title id="{ident}-title">{title}</title>', 1)


def time_plot(views, ident: str) -> str:
    """Measured time against size (log-log) with the fitted model, the expected model and the lower bound;
    several inputs: their measured times overlaid, with their fitted models."""
    fig, ax = _figure()
    many = len(views) > 1
    for i, v in enumerate(views):
        rows = [r for r in v.rows if r.time_s]
        if not rows:
            continue
        sizes, color = [r.size for r in rows], COLORS[i % len(COLORS)]
        tag = f"[{i}] " if many else ""
        ax.plot(sizes, [r.time_s * 1e6 for r in rows], "o", ms=3.5, color=color, label=f"{tag}measured")
        if all(r.fitted_s for r in rows):
            ax.plot(
                sizes,
                [r.fitted_s * 1e6 for r in rows],
                "-",
                lw=1.2,
                color=color,
                alpha=0.7,
                label=f"{tag}fitted regimes",
            )
        if not many and all(r.expected_s for r in rows):
            ax.plot(sizes, [r.expected_s * 1e6 for r in rows], "--", lw=1.2, color="#444444", label="expected (model)")
        shown = bound_points(rows) if not many else []
        if shown:
            ax.plot(
                [r.size for r in shown],
                [r.bound_s * 1e6 for r in shown],
                ":",
                lw=1.4,
                color="#888888",
                label="lower bound (bandwidth term)",
            )
    ax.set_yscale("log")
    _few_decades(ax, [r.time_s * 1e6 for v in views for r in v.rows if r.time_s])
    ax.set_ylabel("time (\u00b5s)")
    _size_axis(ax, [r.size for v in views for r in v.rows] or [1])
    return _finish(fig, ax, "time per operation", ident)


def bound_points(rows, decades: float = 1.0):
    """The rows whose lower bound is worth drawing on the time plot: those within `decades` below the
    fastest measured time. The bound has no latency term (it is the bytes every rank must move over the
    fastest links), so at small sizes it falls many decades below anything a run can reach and would
    stretch the axis over ten decades; where it is that far below, it says nothing about the run."""
    times = [r.time_s for r in rows if r.time_s]
    if not times or not all(r.bound_s for r in rows):
        return []
    floor = min(times) / 10**decades
    return [r for r in rows if r.bound_s >= floor]


def busbw_plot(views, ident: str) -> str:
    """busbw against size with the peak it is judged against, the expected model's and the bound's busbw,
    and the fitted regimes shaded (one input) or every input's busbw overlaid (several)."""
    fig, ax = _figure()
    many = len(views) > 1
    for i, v in enumerate(views):
        rows = [r for r in v.rows if r.busbw_GBps is not None]
        if not rows:
            continue
        sizes, color = [r.size for r in rows], COLORS[i % len(COLORS)]
        ax.plot(
            sizes,
            [r.busbw_GBps for r in rows],
            "o-",
            ms=3.5,
            lw=1.2,
            color=color,
            label=f"[{i}] measured" if many else "measured",
        )
        if many:
            continue
        # busbw = size x factor / time (nccl-tests PERFORMANCE.md), so each model time has a busbw
        if all(r.expected_s for r in rows):
            ax.plot(
                sizes,
                [r.size * v.busbw_factor / r.expected_s / 1e9 for r in rows],
                "--",
                lw=1.2,
                color="#444444",
                label="expected (model)",
            )
        if all(r.bound_s for r in rows):
            ax.plot(
                sizes,
                [r.size * v.busbw_factor / max(r.bound_s, 1e-12) / 1e9 for r in rows],
                ":",
                lw=1.4,
                color="#888888",
                label="lower bound",
            )
        if v.peak_GBps:
            ax.axhline(v.peak_GBps, color="#d62728", ls="-.", lw=1, label=f"lower bound's peak {v.peak_GBps:.1f} GB/s")
        _shade_regimes(ax, v.regimes)
    ax.set_ylabel("busbw (GB/s)")
    top = max(
        [r.busbw_GBps for v in views for r in v.rows if r.busbw_GBps is not None]
        + [v.peak_GBps for v in views if v.peak_GBps and not many]
        + [1e-9]
    )
    ax.set_ylim(0, 1.18 * top)  # headroom above the peak line for the regime labels
    _size_axis(ax, [r.size for v in views for r in v.rows] or [1])
    return _finish(fig, ax, "bus bandwidth", ident)


def _shade_regimes(ax, regimes) -> None:
    for k, r in enumerate(regimes):
        ax.axvspan(r.from_bytes, max(r.to_bytes, r.from_bytes), color="#2ca02c", alpha=0.06 if k % 2 else 0.13, lw=0)
        middle = (r.from_bytes * max(r.to_bytes, r.from_bytes)) ** 0.5  # the middle on a log axis
        ax.text(
            middle,
            0.985,
            f"R{k + 1}",
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="top",
            fontsize=8,
            color="#2a6e2a",
        )


def validation_plot(view, ident: str) -> str:
    """predicted / measured per algorithm against size: 1 is a perfect model."""
    fig, ax = _figure()
    keys = sorted({(r["collective"], r["algorithm"]) for r in view.rows})
    for i, key in enumerate(keys):
        mine = sorted(
            (r for r in view.rows if (r["collective"], r["algorithm"]) == key and r["error"] is not None),
            key=lambda r: r["size"],
        )
        ax.plot(
            [r["size"] for r in mine],
            [1 + r["error"] for r in mine],
            "o-",
            ms=3.5,
            lw=1,
            color=COLORS[i % len(COLORS)],
            label=f"[{i}]",
        )
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_ylabel("predicted / measured")
    _size_axis(ax, [r["size"] for r in view.rows] or [1])
    return _finish(fig, ax, "model against measurement", ident)
