#!/usr/bin/env python3
"""A program that tries to tamper with its checkpoint after it exits.

It trains and writes a good checkpoint with a passing evaluation, then
forks a background child and exits 0 at once. The child waits until the
program has exited, 50 ms more, and then keeps overwriting model.json for a few seconds — during the
publisher's staging and verification if it were allowed to live. The
publisher kills the program's whole process group when the program exits,
so the child never writes; the published model.json is the evaluated one.
(With --escape the child leaves the process group with setsid(); then the
publisher's reload-and-verify, which compares the bytes read back with the
manifest and the evaluation's hashes, is what stands in its way.)
Standard library only.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402

escape = "--escape" in sys.argv
staging = os.environ["TRACECHECK_STAGING_DIR"]
train.main([])
path = os.path.join(staging, "model.json")
parent = os.getpid()
if os.fork() == 0:
    if escape:
        os.setsid()
    while os.getppid() == parent:  # until the program has exited
        time.sleep(0.005)
    time.sleep(0.05)
    deadline = time.time() + 3
    while time.time() < deadline:
        try:
            with open(path, "a") as f:
                f.write(" TAMPERED")
        except OSError:
            pass
        time.sleep(0.01)
    os._exit(0)
sys.exit(0)
