#!/usr/bin/env python3
"""Programs whose checkpoint must fail staging or verification.

Every mode exits 0 with an evaluation result that passes, so only the
publisher's checks stand between it and publication:

  stale     (default) evaluates the trained model but saves the untrained
            one: the files the evaluation names (by SHA-256) are not the
            files staged, so built-in verification fails.
  consumer  saves weights that are valid JSON with matching hashes but that
            a consumer cannot use (NaN): only a verify command such as
            examples/verify.py catches it.
  symlink   adds a symlink pointing outside the staging directory.
  fifo      adds a named pipe (a special file).
  manifest  writes a file named like the publisher's manifest.
  nopass    writes an evaluation result with "passed": false.
  noeval    writes no evaluation result.
  empty     writes no checkpoint at all.
Standard library only.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "stale"
staging = os.environ["TRACECHECK_STAGING_DIR"]
xs, ys = train.make_data(400, seed=7)
hx, hy = train.make_data(100, seed=8)
model = train.train(xs, ys, 200, 0.5)
if mode == "empty":
    train.write_eval(True, {}, {})
    sys.exit(0)
path = train.write_model(staging, model)
files = {"model.json": train.sha256_file(path)}
metrics = {"heldout_mse": train.mse(model, hx, hy)}
if mode == "stale":
    train.write_model(staging, {"w": [0.0, 0.0, 0.0], "b": 0.0})  # the wrong weights
elif mode == "consumer":
    with open(path, "w") as f:
        json.dump({"format": "linreg-v1", "w": [math.nan, 0.0, 0.0], "b": 0.0}, f)
    files = {"model.json": train.sha256_file(path)}
elif mode == "symlink":
    os.symlink("/etc/passwd", os.path.join(staging, "vocab.txt"))
elif mode == "fifo":
    os.mkfifo(os.path.join(staging, "stream"))
elif mode == "manifest":
    with open(os.path.join(staging, "tracecheck-manifest.json"), "w") as f:
        f.write("{}")
elif mode == "nopass":
    train.write_eval(False, metrics, files)
    sys.exit(0)
elif mode == "noeval":
    sys.exit(0)
else:
    print("unknown mode " + mode, file=sys.stderr)
    sys.exit(2)
train.write_eval(True, metrics, files)
print("wrote a bad checkpoint (" + mode + ")")
