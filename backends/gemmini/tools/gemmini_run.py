#!/usr/bin/env python3
"""Runs a simulator (spike) and keeps what it printed in a file the judge reads as data.

    gemmini_run.py --log FILE [--max-bytes N] -- spike --extension=gemmini BINARY

The program's output is copied to stdout as well (for the step's log) and cut at --max-bytes.
The exit status is the program's: the harness exits 1 when its own comparison failed. A program that
cannot be started (spike missing, not executable) gives 127: the evaluator's "a tool of this machine is
missing", an `error`, never a verdict about the candidate.
"""
import argparse
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log", required=True)
    p.add_argument("--max-bytes", type=int, default=4 << 20)
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        print("gemmini_run: no command after --", file=sys.stderr)
        return 2
    kept = 0
    with open(a.log, "wb") as log:
        try:
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except OSError as e:
            print(f"gemmini_run: cannot start {command[0]} (setting spike, AUTOCOMP_GEMMINI_SPIKE): {e}", file=sys.stderr)
            return 127
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):
            if kept < a.max_bytes:
                part = chunk[: a.max_bytes - kept]
                log.write(part)
                sys.stdout.buffer.write(part)
                kept += len(part)
        status = proc.wait()
    sys.stdout.flush()
    if kept >= a.max_bytes:
        print(f"\ngemmini_run: output cut at {a.max_bytes} bytes", file=sys.stderr)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
