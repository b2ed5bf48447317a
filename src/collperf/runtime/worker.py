"""A rank started as its own program (inside a testbed host): `python -m collperf.runtime.worker DIR RANK`.

DIR holds the job (job.pkl: the Job, the world size, the timeout) and the FileStore; the rank reports
to the parent through files in DIR (runtime/channels.py's FileChannel), since testbed hosts share the
filesystem but not the network of the parent.
"""

from __future__ import annotations

import os
import pickle
import sys
from collperf.runtime.launch import worker_main


class FileReporter:
    """The worker's side of the channel: each report an atomically renamed pickle."""

    def __init__(self, directory: str):
        import threading

        self.directory, self.seq, self.lock = directory, 0, threading.Lock()  # the heartbeat thread puts too

    def put(self, message) -> None:
        rank = message[0]
        with self.lock:
            path = os.path.join(self.directory, f"msg-{rank:05d}-{self.seq:09d}.pkl")
            self.seq += 1
        with open(path + ".tmp", "wb") as f:
            pickle.dump(message, f)
        os.replace(path + ".tmp", path)

    def close(self) -> None:
        pass

    def join_thread(self) -> None:
        pass


def main() -> None:
    directory, rank = sys.argv[1], int(sys.argv[2])
    with open(os.path.join(directory, "job.pkl"), "rb") as f:
        job, world, timeout_s, launcher_pid = pickle.load(f)
    worker_main(rank, world, os.path.join(directory, "store"), job, FileReporter(directory), timeout_s, launcher_pid)


if __name__ == "__main__":
    main()
