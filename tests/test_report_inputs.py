"""`collperf report` on the inputs that describe a system (an NCCL debug log, a topology dump, a link test): the
system assumed, what NCCL chose, the link verdicts and the check-first list, each with the line behind it, on
the same self-contained page as the tables, every string from an input escaped."""

import html
from pathlib import Path

from typer.testing import CliRunner

from collperf import api
from collperf.cli import app
from collperf.diagnose.inputs import LinkKind, InputReport, LinkVerdict
from collperf.spec import NetworkSpec
from tests.test_report import external_references, page_text, squash

FIXTURES = Path(__file__).parent / "fixtures"
INPUTS = FIXTURES / "inputs"
A100 = Path(__file__).resolve().parent.parent / "examples" / "01_superbench-a100x8-allreduce.txt"

# four HCAs of one ib_write_bw sweep (perftest's own layout), the third at 180.2 of 400 Gb/s
_BLOCK = (
    "---\n RDMA_Write BW Test\n Device         : {d}\n Link type       : IB\n---\n"
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
    " 65536      5000             {bw}             {bw}      0.7\n---\n"
)


def test_the_page_shows_system_choices_links_and_check_first(tmp_path):
    hcas = tmp_path / "ib_write_bw_4hca.txt"
    hcas.write_text("".join(_BLOCK.format(d=f"mlx5_{i}", bw=bw) for i, bw in enumerate((392.4, 391.9, 180.2, 392.0))))
    inputs = [
        str(INPUTS / "nccl_debug_h800_socket.log"),
        str(INPUTS / "p2p_bandwidth_6gpu_p2p_slow.txt"),
        str(hcas),
        str(A100),
    ]
    page = api.report(inputs, tmp_path / "inputs.html", network=NetworkSpec(inter_bandwidth="400Gb/s")).read_text()
    assert external_references(page) == []
    text, tags = page_text(page)
    assert "script" not in tags
    # the nccl-tests table keeps its own section beside the three inputs' sections and their overview
    assert "System inputs" in text and "Fitted regimes" in text
    assert page.count('<section class="input" id="system-input-') == 3
    # the NCCL log: the system it resolves to, what NCCL chose and the check-first item, each with its line
    assert "hgx-h800: 1 node(s) x 4 H800 SXM5 80GB" in text
    assert "What NCCL chose" in text and "TCP sockets (NET/Socket)" in text
    assert "NCCL uses TCP sockets (NET/Socket), not RDMA" in text
    assert "tj5-sc-ai-h800r-dev01:532:1764 [1] NCCL INFO Using network Socket" in text
    # p2pBandwidthLatencyTest: P2P slower than through host memory, checked first with the matrix row behind it
    assert "peer-to-peer copies (9.95 GB/s, median) are slower than the same copies through host memory" in text
    assert "line 13: 0 912.68 9.90 9.90 9.90 9.90 9.90" in text
    # the HCAs: 180.2 Gb/s = 22.5 GB/s of 50 GB/s named slow, in the verdict and in its row
    assert "1 of 4 link(s) slow: mlx5_2" in text
    row = text[text.index("mlx5_2 RDMA_Write") :]
    assert squash(row[:200]).startswith("mlx5_2 RDMA_Write BW Test 22.52 50 48.99 slow 22.525 GB/s is 45% of")
    assert '<td class="l bad"><b>slow</b>' in page


def test_a_report_of_one_input_and_of_an_input_report_object_escaped(tmp_path):
    hostile = "<script>alert(1)</script>"
    report = InputReport(
        source="host<img src=x onerror=alert(1)>.log",
        kind="NCCL debug log",
        facts=[("ranks", "8", f"{hostile} NCCL INFO comm 0x1 rank 0 nranks 8")],
        chose=[("protocol", "LL128", "NCCL INFO 1 coll channels")],
        check_first=[(f"check {hostile}", "line 3: <b>bold</b>")],
        links=[
            LinkVerdict(
                "mlx5_0", "ib_write_bw", 10.0, 50.0, "--nic-rate", 49.0, LinkKind.SLOW, "20% of the rate", f"{hostile}"
            )
        ],
    )
    page = api.report([report], tmp_path / "one.html").read_text()
    assert "<script" not in page.lower() and "<img" not in page.lower() and "<b>bold" not in page
    assert html.escape(hostile) in page and external_references(page) == []
    text, _ = page_text(page)
    assert "collperf report: NCCL debug log host<img src=x onerror=alert(1)>.log" in text  # the title names it
    assert "1 of 1 link(s) slow: mlx5_0" in text and "System inputs" not in text  # one: no overview


def test_cli_report_of_a_topology_dump(tmp_path):
    out = tmp_path / "topo.html"
    res = CliRunner().invoke(app, ["report", str(INPUTS / "nccl_topo_ibm_h100x8.xml"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    text, _ = page_text(out.read_text())
    assert "NCCL topology XML" in text and "GPU 0 nearest NIC mlx5_7 (PIX)" in text
    assert "dgx-h100: 1 node(s) x 8 H100 80GB HBM3" in text
