"""Every way a run ends is written honestly and read back as such: the text footer, the JSON's complete
flag and the CSV's run column say INCOMPLETE with the cause; diagnose reports such an input as incomplete;
a result file that cannot be written (a file-size limit standing in for a full disk) stops the run with a
named cause, keeps the previous file and leaves no temporary behind; SIGTERM ends a bench with its rows."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collperf import api, ingest
from collperf.lab.bench import Terminated, _interrupted
from collperf.lab.results import OutputError, ResultFiles, run_state, to_csv, to_json, to_text
from collperf.errors import RunError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_bench_output import _results  # noqa: E402

SRC = str(Path(__file__).resolve().parent.parent / "src")


def _stopped(reason="failed after 4 rows"):
    res = _results()
    res.rows = res.rows[:4]  # ring's 3 rows and builtin's first: the run died in builtin's block
    res.stopped = reason
    return res


def test_a_complete_run_says_complete_everywhere():
    res = _results()
    assert run_state(res) == "complete"
    assert "# Collective test concluded" in to_text(res) and "# collperf run: complete" in to_text(res)
    assert {line.rsplit(",", 1)[1] for line in to_csv(res).splitlines()[1:]} == {"complete"}
    for text, name in ((to_text(res), "r.txt"), (json.dumps(to_json(res)), "r.json"), (to_csv(res), "r.csv")):
        assert not any(t.header.get("incomplete") for t in ingest.parse(text, name))


def test_a_stopped_run_is_incomplete_in_text_json_and_csv():
    res = _stopped()
    text = to_text(res)
    # the block it stopped in does not claim to have concluded; the one before it did
    assert text.count("# Collective test concluded") == 1
    assert "# Collective test INCOMPLETE: all_reduce_perf: failed after 4 rows" in text
    assert text.rstrip().endswith("# collperf run: INCOMPLETE: failed after 4 rows")
    assert {line.rsplit(",", 1)[1] for line in to_csv(res).splitlines()[1:]} == {"INCOMPLETE: failed after 4 rows"}
    for doc, name in ((text, "r.txt"), (json.dumps(to_json(res)), "r.json"), (to_csv(res), "r.csv")):
        tables = {t.header["algorithm"]: t for t in ingest.parse(doc, name)}
        assert "failed after 4 rows" in tables["builtin"].header["incomplete"], name


def test_a_file_of_a_run_still_going_or_killed_is_incomplete(tmp_path):
    res = _results()
    res.rows = res.rows[:2]  # what a killed launcher leaves: rewritten after row 2, never again
    ResultFiles(str(tmp_path / "r.json"), str(tmp_path / "r.csv")).update(res)
    for name in ("r.json", "r.csv"):
        (table,) = ingest.load(tmp_path / name)
        assert table.header["incomplete"], name
    assert "2 of 6 rows" in (tmp_path / "r.csv").read_text()


WRITERS = {"r.txt": to_text, "r.json": lambda r: json.dumps(to_json(r)), "r.csv": to_csv}


@pytest.mark.parametrize("name", list(WRITERS))
def test_diagnose_says_the_input_is_incomplete(tmp_path, name):
    res = _results(algorithms=("ring", "builtin", "rhd"))
    res.rows = res.rows[:6]  # ring and builtin measured, then the run was stopped before rhd
    res.stopped = "terminated (SIGTERM) after 6 rows"
    (tmp_path / name).write_text(WRITERS[name](res))
    diagnoses = api.diagnose_logs([str(tmp_path / name)], peak="1GB/s")
    ring, builtin = sorted(diagnoses, key=lambda d: d.table.header["algorithm"] != "ring")
    finding = next(f for f in builtin.findings if f.kind == "incomplete")
    assert "terminated (SIGTERM) after 6 rows" in finding.message
    if name == "r.txt":  # the text's ring block concluded; JSON and CSV mark the whole run
        assert not any(f.kind == "incomplete" for f in ring.findings)


@pytest.mark.parametrize("name", list(WRITERS))
def test_what_can_be_judged_is_judged_and_the_rest_listed_with_why(tmp_path, name):
    res = _stopped()  # builtin has one row: nothing to fit, ring is whole
    (tmp_path / name).write_text(WRITERS[name](res))
    fits = api.fit_logs([str(tmp_path / name)])
    assert [f.table.header["algorithm"] for f in fits] == ["ring"]
    (left,) = fits.not_judged
    assert left.table.header["algorithm"] == "builtin" and "1 usable row" in left.why
    assert left.to_json()["not_judged"] == left.why
    # diagnose judges the unfittable table's rows without a fit, and says why it has none
    judged = api.diagnose_logs([str(tmp_path / name)])
    assert [d.table.header["algorithm"] for d in judged] == ["ring", "builtin"] and not judged.not_judged
    assert "not-fitted" in {f.kind for f in judged[1].findings}


def test_the_cli_shows_what_it_could_not_judge(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps(to_json(_stopped())))
    env = {**os.environ, "PYTHONPATH": SRC}
    for command in ("fit",):  # diagnose judges such a table without its fit (a not-fitted finding)
        done = subprocess.run(
            [sys.executable, "-m", "collperf", command, str(tmp_path / "r.json")],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "[ring]" in done.stdout and "1 table(s) could not be" in done.stdout and "1 usable row" in done.stdout
        done = subprocess.run(
            [sys.executable, "-m", "collperf", command, str(tmp_path / "r.json"), "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        docs = json.loads(done.stdout)
        docs = docs if isinstance(docs, list) else docs["diagnoses"]
        assert [d["not_judged"] for d in docs if "not_judged" in d] == [
            next(d["not_judged"] for d in docs if "not_judged" in d)
        ]


def test_a_truncated_nccl_tests_log_is_diagnosed_as_incomplete():
    fixture = Path(__file__).resolve().parent / "fixtures" / "truncated.txt"
    (d,) = api.diagnose_logs([str(fixture)], peak="10GB/s")[:1]
    assert any(f.kind == "incomplete" and "no footer" in f.message for f in d.findings)


_FSIZE = """
import resource, signal, sys
sys.path.insert(0, {src!r})
from collperf.lab.results import OutputError, ResultFiles
sys.path.insert(0, {tests!r})
from test_bench_output import _results
files = ResultFiles({path!r})
res = _results()
rows, res.rows = res.rows, res.rows[:1]
files.update(res)                              # the first row fits
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (len(open({path!r}).read()) + 64, resource.RLIM_INFINITY))
res.rows = rows
try:
    files.update(res)
except OutputError as e:
    print("OutputError:", e)
"""


def test_a_result_file_that_cannot_be_written_is_a_named_stop(tmp_path):
    path = str(tmp_path / "r.json")
    script = _FSIZE.format(src=SRC, tests=str(Path(__file__).resolve().parent), path=path)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "OutputError: cannot write" in done.stdout and path in done.stdout
    assert len(json.loads(Path(path).read_text())["results"]) == 1  # the previous file, whole
    assert os.listdir(tmp_path) == ["r.json"]  # no r.json.tmp-PID left
    assert issubclass(OutputError, RunError)  # the run stops as on a failure


def test_sigterm_and_a_failed_write_name_their_cause():
    res = _results()
    res.rows = res.rows[:2]
    e = _interrupted(res, "given", Terminated("SIGTERM"))
    assert e.reason.startswith("terminated") and "SIGTERM" in str(e) and res.stopped.startswith("terminated")
    res = _results()
    e = _interrupted(res, "given", OutputError("cannot write r.json: No space left on device"))
    assert e.reason == "failed" and "No space left on device" in str(e)


def _rows_in(path: Path) -> int:
    try:
        return len(json.loads(path.read_text())["results"])
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.multiprocess
def test_sigterm_ends_a_bench_with_its_rows_and_an_incomplete_marker(tmp_path):
    """A real 2-rank sweep, SIGTERM once its first row is on disk: exit 143, the cause on stderr, the text
    and the JSON marked incomplete (the sweep is long enough that it cannot finish first: 24 sizes x 2000
    iterations up to 64 MiB)."""
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "collperf",
            "bench",
            "--collective",
            "allreduce",
            "--ranks",
            "2",
            "-b",
            "8",
            "-e",
            "64M",
            "-n",
            "2000",
            "-w",
            "1",
            "-J",
            str(out),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    while _rows_in(out) < 1 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert "terminated (SIGTERM)" in stderr
    assert "# collperf run: INCOMPLETE: terminated (SIGTERM)" in stdout
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and doc["stopped"].startswith("terminated (SIGTERM)")
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]
