"""Write tracecheck traces (NDJSON, docs/trace-format.md) from Python.

One file, standard library only: copy it next to your code, or put this
directory on sys.path.

    from tracecheck_trace import TraceWriter

    with TraceWriter("trace.ndjson", spec="session", emitter="my-service") as w:
        w.emit("s1", "Init", {"conn": 0, "vad": 0, "resp": 0, "compaction": 0})
        w.emit("s1", "VadStart", {"vad": 1})

Each event is one line, written and flushed whole (and fsynced with
fsync=True) under a lock, so threads may share a writer. Sequence numbers
are counted per instance unless given. Values: bool, int, str; lists are
sequences, dicts records; sets, frozensets and tuples are written as ITF's
{"#set": [...]} and {"#tup": [...]}; ints outside 64 bits as {"#bigint"};
floats and None are refused (the trace format has none).
"""

import hashlib
import json
import os
import threading

__all__ = ["TraceWriter", "spec_sha256"]

_INT64 = 1 << 63


def spec_sha256(*paths):
    """The spec hash a header carries: the SHA-256 of the files concatenated."""
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def _value(v):
    if isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, int):
        return v if -_INT64 <= v < _INT64 else {"#bigint": str(v)}
    if isinstance(v, (set, frozenset)):
        return {"#set": sorted((_value(x) for x in v), key=json.dumps)}
    if isinstance(v, tuple):
        return {"#tup": [_value(x) for x in v]}
    if isinstance(v, list):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _value(x) for k, x in v.items()}
    raise TypeError("tracecheck traces hold bool, int, str, list, dict, set, tuple; not %r" % (v,))


class TraceWriter:
    """A thread-safe writer of one NDJSON trace.

    target is a path (opened for appending) or a binary file object.
    spec (and spec_sha256, emitter) write a header line first, so that
    tracecheck knows the trace's spec; fsync=True fsyncs every event.
    """

    def __init__(self, target, spec=None, spec_sha256=None, emitter=None, fsync=False):
        self._own = isinstance(target, (str, bytes, os.PathLike))
        self._f = open(target, "ab") if self._own else target
        self._fsync = fsync
        self._lock = threading.Lock()
        self._seq = {}
        if spec is not None:
            header = {"tracecheck": 1, "spec": spec}
            if spec_sha256:
                header["spec_sha256"] = spec_sha256
            if emitter:
                header["emitter"] = emitter
            with self._lock:
                self._write(header)

    def emit(self, instance, action, state, seq=None, part=None, stutter=False, detail=None, time=None, args=None):
        """Write one event: instance's step by action to state (variables after the step).

        args, for a parameterised action, lists its arguments in the spec's
        parameter order (RMPrepare("r1") is action="RMPrepare", args=["r1"]).
        """
        if not instance or not action:
            raise ValueError("an event needs an instance and an action")
        if stutter and part:
            raise ValueError("a stutter event cannot be part of a composite step")
        if args is not None and (stutter or action == "Init"):
            raise ValueError("Init and stutter events take no arguments")
        with self._lock:
            if seq is None:
                seq = self._seq.get(instance, -1) + 1
            self._seq[instance] = seq
            e = {"v": 1, "instance": instance, "seq": seq, "action": action}
            if args:
                e["args"] = [_value(a) for a in args]
            e["state"] = _value(dict(state))
            if part:
                e["part"] = part
            if stutter:
                e["stutter"] = True
            if time is not None:
                e["time"] = time
            if detail is not None:
                e["detail"] = detail
            self._write(e)

    def _write(self, obj):
        line = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"
        self._f.write(line.encode("utf-8"))
        self._f.flush()
        if self._fsync:
            os.fsync(self._f.fileno())

    def close(self):
        with self._lock:
            self._f.flush()
            if self._own:
                self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
