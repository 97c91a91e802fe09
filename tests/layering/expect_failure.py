#!/usr/bin/env python3
"""Runs scripts/check_layers.py on a fixture tree of tests/layering/ and passes only if it fails
(exit status 1) printing exactly the fixture's expected.txt, one problem a line.

Usage: expect_failure.py CHECK_LAYERS FIXTURE_DIR README
(the layer order is the real README.md's, so the fixtures also check its '## Layers' block).
"""

import os
import subprocess
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    script, fixture, readme = argv
    with open(os.path.join(fixture, "expected.txt"), encoding="utf-8") as f:
        expected = f.read().splitlines()
    run = subprocess.run([sys.executable, script, "--root", fixture, "--readme", readme],
                         capture_output=True, text=True)
    got = run.stdout.splitlines()
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    ok = bool(expected)
    if not expected:
        print("expect_failure: the fixture's expected.txt is empty", file=sys.stderr)
    if run.returncode != 1:
        print(f"expect_failure: check_layers.py exited {run.returncode}, expected 1",
              file=sys.stderr)
        ok = False
    for line in expected:
        if line not in got:
            print(f"expect_failure: missing: {line}", file=sys.stderr)
            ok = False
    for line in got:
        if line not in expected:
            print(f"expect_failure: unexpected: {line}", file=sys.stderr)
            ok = False
    if ok:
        print(f"expect_failure: check_layers.py reported the {len(expected)} expected problem(s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
