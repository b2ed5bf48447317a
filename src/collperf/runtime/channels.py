"""How ranks report to their launcher: a pipe per rank for local ranks, files in a shared directory for a
testbed's (its hosts share the filesystem, not the network, with the launcher; the writer's side is
runtime/worker.py's FileReporter). Neither uses a semaphore or lock across processes, so a killed launcher
leaves nothing held (multiprocessing queues would leak theirs)."""

from __future__ import annotations

import os
import pickle
import queue as queue_module
import threading
import time


class PipeReporter:
    """A rank's side of its pipe: put() from the main thread and the heartbeat thread, one whole message at
    a time (a send is synchronous: nothing is left to flush when the rank leaves)."""

    def __init__(self, conn):
        self.conn, self.lock = conn, threading.Lock()

    def put(self, message) -> None:
        with self.lock:
            self.conn.send(message)

    def close(self) -> None:
        pass

    def join_thread(self) -> None:
        pass


class Pipes:
    """The launcher's side of the per-rank pipes: a reader thread per rank, so that a rank stopped in the
    middle of a message holds up only its own thread; the supervisor takes the next message of any rank."""

    def __init__(self, readers):
        self.inbox = queue_module.SimpleQueue()
        for reader in readers:
            threading.Thread(target=self._read, args=(reader,), name="collperf-reader", daemon=True).start()

    def _read(self, reader) -> None:
        while True:
            try:
                self.inbox.put(reader.recv())
            except (EOFError, OSError, ValueError, pickle.UnpicklingError):  # the rank left (or was killed)
                return

    def get(self, timeout: float):
        return self.inbox.get(timeout=timeout)


class FileChannel:
    """The parent's side of runtime/worker.py's FileReporter: reports as they appear in a directory."""

    def __init__(self, directory: str):
        self.directory, self.pending = directory, []

    def get(self, timeout: float):
        if not self.pending:
            # by rank, then by sequence number: each rank's reports in the order it sent them
            self.pending = sorted(n for n in os.listdir(self.directory) if n.startswith("msg-") and n.endswith(".pkl"))
        if not self.pending:
            time.sleep(timeout)
            raise queue_module.Empty
        path = os.path.join(self.directory, self.pending.pop(0))
        with open(path, "rb") as f:
            message = pickle.load(f)
        os.remove(path)  # read once; the directory stays small however long the run
        return message
