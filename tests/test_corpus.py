"""The reference corpus of public nccl-tests / rccl-tests results shipped as package data: every file
reads, the index describes exactly the files there are, and its columns hold what they claim."""

import csv
import re
from importlib import resources

import pytest

from collperf.ingest import load, parse

CORPUS = resources.files("collperf") / "data" / "corpus"
COLUMNS = [
    "id",
    "source_url",
    "source_group",
    "tool",
    "system",
    "gpu",
    "gpus_per_node",
    "nodes",
    "ranks",
    "fabric",
    "nic",
    "collectives",
    "nccl_version",
    "min_size_bytes",
    "max_size_bytes",
    "health",
    "why",
]
FABRICS = {
    "nvswitch",
    "nvswitch-nvls",
    "pcie-p2p",
    "pcie-host",
    "ib",
    "roce",
    "efa",
    "tcpx",
    "tcpxo",
    "socket",
    "nvl72",
    "xgmi",
}
COLLECTIVES = {
    "allreduce",
    "allgather",
    "reducescatter",
    "broadcast",
    "reduce",
    "alltoall",
    "sendrecv",
    "gather",
    "scatter",
}
# NICs per node x rate (? where the source does not state it) - transport; one number for the node's capacity
NIC = re.compile(r"^\d+x(\d+|\?)G-(ib|roce|efa|tcpx|tcpxo|socket)$")


def _index() -> list[dict]:
    with (CORPUS / "index.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        return list(reader)


INDEX = _index()
BY_ID = {row["id"]: row for row in INDEX}


def _tables(row):
    collectives = row["collectives"].split(";")
    # sendrecv and alltoall logs without a program line read as allreduce unless told
    return load(CORPUS / f"{row['id']}.txt", collective=collectives[0] if len(collectives) == 1 else None)


def test_the_corpus_is_large_and_varied_enough():
    assert len(INDEX) >= 60
    assert len({row["system"] for row in INDEX}) >= 12
    assert len({row["source_group"] for row in INDEX}) >= 12
    assert {"healthy", "known-bad"} == {row["health"] for row in INDEX}


def test_index_and_files_match_one_to_one():
    files = {p.name.removesuffix(".txt") for p in CORPUS.iterdir() if p.name.endswith(".txt")}
    assert len(BY_ID) == len(INDEX), "duplicate ids in index.csv"
    assert files == set(BY_ID)
    assert {p.name for p in CORPUS.iterdir()} == {f"{i}.txt" for i in files} | {"index.csv"}


@pytest.mark.parametrize("row", INDEX, ids=[row["id"] for row in INDEX])
def test_index_values_are_well_formed(row):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", row["id"])
    assert row["source_url"].startswith("https://") and row["source_group"] and row["system"] and row["gpu"]
    assert row["tool"] in {"nccl-tests", "rccl-tests"}
    assert row["fabric"] in FABRICS
    assert row["health"] in {"healthy", "known-bad"} and row["why"].strip()
    gpn, nodes, ranks = int(row["gpus_per_node"]), int(row["nodes"]), int(row["ranks"])
    assert gpn >= 1 and nodes >= 1 and ranks == gpn * nodes
    assert row["nic"] == "" or NIC.match(row["nic"]), row["nic"]
    if nodes == 1:
        assert row["nic"] == "" and row["fabric"] not in {"ib", "roce", "efa", "tcpx", "tcpxo", "socket"}
    elif row["fabric"] != "nvl72":
        assert row["nic"].endswith("-" + row["fabric"]), "a multi-node run names its NICs in its fabric"
    assert set(row["collectives"].split(";")) <= COLLECTIVES
    assert row["nccl_version"] == "" or re.fullmatch(r"\d+\.\d+\.\d+\S*", row["nccl_version"])
    assert 0 <= int(row["min_size_bytes"]) <= int(row["max_size_bytes"])


@pytest.mark.parametrize("row", INDEX, ids=[row["id"] for row in INDEX])
def test_every_file_has_provenance_and_reads(row):
    text = (CORPUS / f"{row['id']}.txt").read_text()
    first, second = text.splitlines()[:2]
    assert re.fullmatch(r"# source: https://\S+ \(.+\)", first), first
    assert row["source_url"] in first
    assert second.startswith("# hardware: ") and len(second) > len("# hardware: ") + 10
    tables = _tables(row)
    rows = [r for t in tables for r in t.rows]
    assert rows, "no result row"
    assert {t.collective for t in tables} <= set(row["collectives"].split(";"))
    positive = [r.size for r in rows if r.size > 0] or [0]
    assert (min(positive), max(positive)) == (int(row["min_size_bytes"]), int(row["max_size_bytes"]))
    # the two header lines are comments: the log reads the same without them
    assert len([r for t in parse(text.split("\n", 2)[2], row["id"], tables[0].collective) for r in t.rows]) == len(rows)


@pytest.mark.parametrize("row", INDEX, ids=[row["id"] for row in INDEX])
def test_printed_bandwidths_agree_with_the_index_ranks(row):
    """busbw / algbw is the collective's bus factor for the rank count in the index (hand formulas of
    nccl-tests' doc/PERFORMANCE.md), so a wrong rank count or a mistyped row shows here."""
    ranks = int(row["ranks"])
    factor = {
        "allreduce": 2 * (ranks - 1) / ranks,
        "allgather": (ranks - 1) / ranks,
        "reducescatter": (ranks - 1) / ranks,
        "alltoall": (ranks - 1) / ranks,
        "gather": (ranks - 1) / ranks,
        "scatter": (ranks - 1) / ranks,
        "broadcast": 1.0,
        "reduce": 1.0,
        "sendrecv": 1.0,
    }
    for t in _tables(row):
        if t.collective not in factor:
            continue
        for r in t.rows:
            if r.algbw_GBps and r.algbw_GBps >= 1.0 and r.busbw_GBps:
                # two printed decimals: allow the rounding of both numbers
                assert r.busbw_GBps == pytest.approx(
                    r.algbw_GBps * factor[t.collective], abs=0.011 + 0.006 * factor[t.collective]
                ), (row["id"], r.line)


def test_srun_label_prefixes_are_read_like_mpirun_tags():
    log = (
        "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "0:      1048576        262144     float     sum      -1    100.0   10.49   19.66      0    100.0   10.49   19.66      0\n"
        "0:      2097152        524288     float     sum      -1    200.0   10.49   19.66      0    200.0   10.49   19.66      0\n"
    )
    (table,) = parse(log, "labelled", "allreduce")
    assert [r.size for r in table.placement()] == [1048576, 2097152]
    assert [r.time_s for r in table.placement()] == pytest.approx([100e-6, 200e-6])
    assert table.ranks == 16  # 19.66 / 10.49 = 1.874 = 2 x 15/16
