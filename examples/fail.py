#!/usr/bin/env python3
"""A training run that fails: it writes a partial checkpoint, then crashes.

The publisher must publish nothing and remove the partial checkpoint.
Standard library only.
"""
import os
import sys

staging = os.environ["TRACECHECK_STAGING_DIR"]
with open(os.path.join(staging, "model.json"), "w") as f:
    f.write('{"format": "linreg-v1", "w": [0.1')  # cut short
print("training diverged: loss is nan", file=sys.stderr)
sys.exit(3)
