#!/usr/bin/env python3
"""A program that tries to tamper with its checkpoint after it exits.

It trains and writes a good checkpoint with a passing evaluation, then
forks a background child that keeps model.json open, and exits 0 at once.
The child waits until the program has exited, 50 ms more, and then keeps
appending " TAMPERED" through its open descriptor for seconds — which
would reach the file wherever it is renamed to, the published checkpoint
included. The publisher kills the program's whole process group as soon as
the program exits, so the child never writes; the published model.json is
the evaluated one.

With --escape the child leaves the process group (setsid()), where the
group kill cannot reach it. The publisher still kills it when the program
ends, before staging: it finds it by the TRACECHECK_RUN_ID in its
environment, and `tracecheck run` (a child subreaper) also by ancestry, so
a child that clears its environment dies too. Nothing of the program is
alive when the checkpoint is verified, so what is published is what was
verified. Standard library only.
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
    f = open(path, "ab")  # held open: it follows the file through renames
    while os.getppid() == parent:  # until the program has exited
        time.sleep(0.005)
    time.sleep(0.05)
    deadline = time.time() + (10 if escape else 3)
    while time.time() < deadline:
        try:
            f.write(b" TAMPERED")
            f.flush()
        except OSError:
            pass
        time.sleep(0.01)
    os._exit(0)
sys.exit(0)
