#!/usr/bin/env python3
"""Train a tiny linear regression by gradient descent and write a checkpoint.

Run it under the publisher:

    tracecheck run --publish-dir /tmp/ckpts --name linreg -- python3 examples/train.py

It reads $TRACECHECK_STAGING_DIR (where the checkpoint goes) and
$TRACECHECK_EVAL_FILE (where the evaluation result goes). The evaluation
passes when the held-out mean squared error is below --max-mse; the result
names the SHA-256 of every file the evaluation loaded, so the publisher can
check that the checkpoint it publishes is the one that was evaluated.

Standard library only.
"""
import argparse
import hashlib
import json
import os
import random
import sys
import time

TRUE_W = [2.0, -3.0, 0.5]
TRUE_B = 1.0


def make_data(n, seed):
    rng = random.Random(seed)
    xs, ys = [], []
    for _ in range(n):
        x = [rng.uniform(-1, 1) for _ in TRUE_W]
        y = sum(w * xi for w, xi in zip(TRUE_W, x)) + TRUE_B + rng.gauss(0, 0.05)
        xs.append(x)
        ys.append(y)
    return xs, ys


def predict(model, x):
    return sum(w * xi for w, xi in zip(model["w"], x)) + model["b"]


def mse(model, xs, ys):
    return sum((predict(model, x) - y) ** 2 for x, y in zip(xs, ys)) / len(xs)


def train(xs, ys, epochs, lr):
    model = {"w": [0.0] * len(xs[0]), "b": 0.0}
    n = len(xs)
    for _ in range(epochs):
        gw = [0.0] * len(model["w"])
        gb = 0.0
        for x, y in zip(xs, ys):
            err = predict(model, x) - y
            for i, xi in enumerate(x):
                gw[i] += 2 * err * xi / n
            gb += 2 * err / n
        model["w"] = [w - lr * g for w, g in zip(model["w"], gw)]
        model["b"] -= lr * gb
    return model


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_model(staging, model):
    path = os.path.join(staging, "model.json")
    with open(path, "w") as f:
        json.dump({"format": "linreg-v1", "w": model["w"], "b": model["b"]}, f)
    return path


def load_model(path):
    with open(path) as f:
        d = json.load(f)
    return {"w": d["w"], "b": d["b"]}


def write_eval(passed, metrics, files):
    with open(os.environ["TRACECHECK_EVAL_FILE"], "w") as f:
        json.dump({"passed": passed, "metrics": metrics, "files": files}, f)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--max-mse", type=float, default=0.01)
    p.add_argument("--sleep", type=float, default=0.0, help="seconds to sleep after training (slow runs for interrupt and crash tests)")
    p.add_argument("--extra-mb", type=int, default=0, help="also write a blob of this many MiB (big checkpoints)")
    args = p.parse_args(argv)

    staging = os.environ["TRACECHECK_STAGING_DIR"]
    xs, ys = make_data(400, seed=7)
    hx, hy = make_data(100, seed=8)
    model = train(xs, ys, args.epochs, args.lr)
    if args.sleep:
        time.sleep(args.sleep)
    path = write_model(staging, model)
    files = {}
    if args.extra_mb:
        blob = os.path.join(staging, "blob.bin")
        rng = random.Random(1)
        with open(blob, "wb") as f:
            chunk = bytes(rng.getrandbits(8) for _ in range(1 << 16))
            for _ in range(args.extra_mb * 16):
                f.write(chunk)
    # Evaluate what is on disk, as a consumer would load it.
    loaded = load_model(path)
    held_out = mse(loaded, hx, hy)
    files["model.json"] = sha256_file(path)
    passed = held_out <= args.max_mse
    write_eval(passed, {"heldout_mse": held_out, "epochs": args.epochs}, files)
    print(f"trained {args.epochs} epochs: held-out MSE {held_out:.5f} ({'pass' if passed else 'FAIL'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
