"""Testbed ownership without namespaces: the holder record (pid + start time) decides who may take a
testbed name and what `testbed down` without a name may remove. A live holder is this test process or a
child it started; a dead one is a child that has exited (its pid and start time no longer match)."""

import json
import signal
import subprocess
import sys
import time

import pytest

from collperf.lab.testbed import owners, switch
from testbed_support import CLI, SUPPORTED, SKIPPED_BY_USER, bed_name, leftovers, nothing_left


@pytest.fixture
def owners_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(owners, "OWNERS_DIR", tmp_path)
    return tmp_path


def _held_by(owners_dir, name, pid, by="bench"):
    (owners_dir / f"{name}.json").write_text(json.dumps({"pid": pid, "start_ticks": owners.start_ticks(pid), "by": by}))


def test_a_live_holder_is_seen_and_a_dead_one_is_not(owners_dir):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _held_by(owners_dir, "live", child.pid)
        assert owners.holder("live") == f"a running collperf (pid {child.pid})"
    finally:
        child.kill()
        child.wait()
    assert owners.holder("live") is None  # exited: its testbed is a leftover
    (owners_dir / "reused.json").write_text(json.dumps({"pid": 1, "start_ticks": -5, "by": "bench"}))
    assert owners.holder("reused") is None  # a pid that now belongs to another process
    assert owners.holder("never") is None


def test_a_user_testbed_is_held_until_named(owners_dir):
    owners.claim("mine", by="user")
    assert owners.holder("mine").startswith("`collperf testbed up`")


def test_a_second_run_of_one_name_is_refused_and_the_first_keeps_it(owners_dir, monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    removed = []
    monkeypatch.setattr(switch, "_remove", lambda name: removed.append(name) or [])
    try:
        _held_by(owners_dir, "tb0", child.pid)
        with pytest.raises(switch.TestbedError, match=r"'tb0' is in use by a running collperf .*another name"):
            switch.take("tb0")
        assert switch.give_back("tb0") == [] and removed == []  # not ours: left alone
        with pytest.raises(switch.TestbedError, match="pass --all"):
            switch.down("tb0")
        assert removed == []
    finally:
        child.kill()
        child.wait()
    switch.take("tb0")  # its holder is gone: taken, leftovers removed
    assert removed == ["tb0"] and owners.mine("tb0")
    assert switch.give_back("tb0") == [] and removed == ["tb0", "tb0"] and owners.record("tb0") is None


def test_down_without_a_name_removes_only_what_nobody_holds(owners_dir, monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    removed = []
    monkeypatch.setattr(
        switch, "namespaces", lambda name=None: ["cptb-live-h0", "cptb-live-sw", "cptb-dead-h0", "cptb-user-bed-h0"]
    )
    monkeypatch.setattr(switch, "_remove", lambda name: removed.append(name) or [f"cptb-{name}-h0"])
    try:
        _held_by(owners_dir, "live", child.pid)
        (owners_dir / "dead.json").write_text(json.dumps({"pid": child.pid, "start_ticks": -1, "by": "bench"}))
        owners.claim("user-bed", by="user")
        assert switch.down() == ["cptb-dead-h0"] and removed == ["dead"]
        assert switch.held() == ["live", "user-bed"]
        removed.clear()
        assert sorted(switch.down(everything=True)) == ["cptb-dead-h0", "cptb-live-h0", "cptb-user-bed-h0"]
    finally:
        child.kill()
        child.wait()


def _wait_until_held(name: str) -> None:
    """Until the testbed is up and its holder recorded (at most 120 s: the caller's checks then fail)."""
    deadline = time.monotonic() + 120
    while not (switch.namespaces(name) and owners.holder(name)) and time.monotonic() < deadline:
        time.sleep(0.3)


def _bench_on(name: str, iters: str) -> list[str]:
    return [
        CLI,
        "bench",
        "--testbed",
        f"hosts=2,rate=1gbit,name={name}",
        "-A",
        "ring",
        "-b",
        "64K",
        "-e",
        "64K",
        "-n",
        iters,
        "-w",
        "0",
        "--timeout",
        "120",
    ]


@pytest.mark.testbed
def test_two_benches_of_one_name_the_second_refuses_and_the_first_is_untouched():
    """With real namespaces: while a bench holds testbed NAME, a second bench of that name exits 2 naming
    the holder, `testbed down` keeps it, and the first ends by its own SIGTERM (not by a rank
    killed under it), leaving nothing behind."""
    if not SUPPORTED or SKIPPED_BY_USER:
        pytest.skip("the testbed needs Linux, root and iproute2 (ip, tc)")
    name = bed_name("own")
    first = subprocess.Popen(_bench_on(name, "1000000"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_until_held(name)
        assert owners.holder(name) == f"a running collperf (pid {first.pid})"
        second = subprocess.run(_bench_on(name, "1"), capture_output=True, text=True, timeout=120)
        assert second.returncode == 2 and f"'{name}' is in use by a running collperf (pid {first.pid})" in second.stderr
        # a plain `testbed down` keeps it (and a testbed `testbed up` holds for the user); it removes only
        # what dead runs left, which on a shared machine may include other runs' leftovers: none is held
        user = bed_name("usr")
        up = subprocess.run(
            [CLI, "testbed", "up", "--hosts", "2", "--name", user], capture_output=True, text=True, timeout=120
        )
        assert up.returncode == 0, up.stderr
        try:
            assert name in switch.held() and user in switch.held()
            plain = subprocess.run([CLI, "testbed", "down"], capture_output=True, text=True, timeout=120)
            assert plain.returncode == 0, plain.stderr
            said_removed, _, said_kept = plain.stdout.partition("\n")
            assert name not in said_removed and user not in said_removed, plain.stdout
            assert name in said_kept and user in said_kept, plain.stdout
            assert switch.namespaces(name) and switch.namespaces(user) and first.poll() is None
        finally:
            subprocess.run([CLI, "testbed", "down", "--name", user], capture_output=True, timeout=120)
        left = leftovers(user)  # (its workers are the first bench's, still running)
        assert not left["namespaces"] and not left["veths"] and owners.record(user) is None, left
        named = subprocess.run([CLI, "testbed", "down", "--name", name], capture_output=True, text=True, timeout=120)
        assert named.returncode == 2 and "pass --all" in named.stderr
        assert switch.namespaces(name)  # still up, the first still running
        assert first.poll() is None
        first.send_signal(signal.SIGTERM)
        _, err = first.communicate(timeout=120)
        assert first.returncode == 143 and "terminated (SIGTERM)" in err and "died" not in err, err
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert nothing_left(name) and owners.record(name) is None


@pytest.mark.testbed
def test_a_run_whose_testbed_vanished_says_so():
    """The namespaces of a running bench's testbed deleted under it: the error names the testbed, not a rank."""
    if not SUPPORTED or SKIPPED_BY_USER:
        pytest.skip("the testbed needs Linux, root and iproute2 (ip, tc)")
    name = bed_name("van")
    run = subprocess.Popen(_bench_on(name, "1000000"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_until_held(name)
        time.sleep(2)
        switch._remove(name)  # what another tool's cleanup would do
        _, err = run.communicate(timeout=180)
        assert run.returncode == 1 and f"testbed '{name}' vanished during the run" in err, err
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert nothing_left(name)
