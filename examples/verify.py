#!/usr/bin/env python3
"""A verify command: load the staged checkpoint the way its consumer would.

    tracecheck run --publish-dir D --name N --verify-cmd "python3 examples/verify.py" -- python3 examples/train.py

It reads $TRACECHECK_CHECKPOINT_DIR/model.json, checks its format and that
every weight is a finite number, and checks that its predictions on a fixed
probe set are close to the truth. Exit 0 accepts the checkpoint; anything
else fails verification. Standard library only.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402


def main():
    d = os.environ["TRACECHECK_CHECKPOINT_DIR"]
    try:
        with open(os.path.join(d, "model.json")) as f:
            raw = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cannot load model.json: {e}", file=sys.stderr)
        return 1
    if raw.get("format") != "linreg-v1":
        print(f"unknown format {raw.get('format')!r}", file=sys.stderr)
        return 1
    model = {"w": raw.get("w"), "b": raw.get("b")}
    values = list(model["w"] or []) + [model["b"]]
    if len(model["w"] or []) != len(train.TRUE_W) or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        print(f"weights are not {len(train.TRUE_W)} finite numbers and a bias: {values}", file=sys.stderr)
        return 1
    px, py = train.make_data(50, seed=99)
    err = train.mse(model, px, py)
    if err > 0.05:
        print(f"probe MSE {err:.4f} > 0.05", file=sys.stderr)
        return 1
    print(f"checkpoint loads; probe MSE {err:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
