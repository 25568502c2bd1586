"""Realtime sessions simulated in Python threads, traced with tracecheck_trace.

Each session is spec/session.fizz's connection with its children: VAD,
response and compaction start and finish in a random order, then the
connection is torn down, which stops every child. Sessions run in threads
and share one TraceWriter. With --bug, every session's teardown leaves a
running compaction behind (the M4 gap), which tracecheck reports as a
violation of ChildrenDieWithParent.

    python3 sessions.py OUT.ndjson [--sessions N] [--seed S] [--bug] [--spec-sha256 HEX]
"""

import argparse
import os
import random
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracecheck_trace import TraceWriter  # noqa: E402


class Session:
    def __init__(self, name, w, rng, bug):
        self.name, self.w, self.rng, self.bug = name, w, rng, bug
        self.lock = threading.Lock()
        self.conn = self.vad = self.resp = self.compaction = 0

    def state(self):
        return {"conn": self.conn, "vad": self.vad, "resp": self.resp, "compaction": self.compaction}

    def step(self, action, **change):
        # Change the real state and emit the event from it, under one lock:
        # the trace is what happened, in the order it happened.
        with self.lock:
            for k, v in change.items():
                setattr(self, k, v)
            self.w.emit(self.name, action, self.state())

    def run(self):
        self.step("Init")
        for _ in range(self.rng.randint(1, 6)):
            moves = []
            if self.vad == 0:
                moves.append(("VadStart", {"vad": 1}))
            if self.vad == 1:
                moves.append(("VadStop", {"vad": 0}))
            moves.append(("RespStart", {"resp": 1}))
            if self.resp == 1:
                moves.append(("RespFinish", {"resp": 0}))
            if self.compaction == 0:
                moves.append(("CompTrigger", {"compaction": 1}))
            if self.compaction == 1:
                moves.append(("CompFinish", {"compaction": 0}))
            action, change = self.rng.choice(moves)
            self.step(action, **change)
        torn = {"conn": 1, "vad": 2, "resp": 2, "compaction": 2}
        if self.bug:
            if self.compaction == 0:
                self.step("CompTrigger", compaction=1)
            del torn["compaction"]  # the compaction outlives the session
        self.step("Teardown", **torn)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bug", action="store_true")
    ap.add_argument("--spec-sha256", default=None)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with TraceWriter(a.out, spec="session", spec_sha256=a.spec_sha256, emitter="emitters/python/sessions.py", fsync=True) as w:
        sessions = [Session("py-%d" % i, w, random.Random(rng.random()), a.bug) for i in range(a.sessions)]
        threads = [threading.Thread(target=s.run) for s in sessions]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


if __name__ == "__main__":
    main()
