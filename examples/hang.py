#!/usr/bin/env python3
"""A program that hangs, for interrupts.

Plain: it sleeps until SIGTERM ends it. With --ignore-term it ignores
SIGTERM, so the publisher must SIGKILL it after the grace period. With
--children N it also forks N children that hang in the same process group.
Standard library only.
"""
import argparse
import os
import signal
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--ignore-term", action="store_true")
p.add_argument("--children", type=int, default=0)
args = p.parse_args()
if args.ignore_term:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
for _ in range(args.children):
    if os.fork() == 0:
        while True:
            time.sleep(1)
staging = os.environ.get("TRACECHECK_STAGING_DIR")
if staging:
    with open(os.path.join(staging, "partial.bin"), "wb") as f:
        f.write(b"\0" * 1024)
print("hanging", flush=True)
while True:
    time.sleep(1)
