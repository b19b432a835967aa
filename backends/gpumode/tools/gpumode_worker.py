#!/usr/bin/env python3
"""gpumode_worker.py — runs GPU MODE's eval.py on a submission for the gpumode judge.

    gpumode_worker.py --channel-fd 3 --reference DIR/reference.py [--task-root DIR/..] --submission submission.py --mode test|benchmark|leaderboard
                      --run-dir DIR [--python python3]

Started by the workbench as the judge's worker: in the candidate's sandbox, writing only --run-dir.
It takes the evaluation's secret seed from the shared memory the judge filled (never from a command
line or a file), erases it there, assembles the run directory from task.yml, and runs
`python eval.py MODE cases.txt` with POPCORN_SEED set and POPCORN_FD on a pipe; what eval.py writes
there is copied into the shared memory for the judge, which parses and checks it.

What this protects and what it does not: the seed never appears on a command line, in a file or in
a candidate step's environment, and it is fresh for each evaluation. But eval.py imports the
submission into a process of the same tree, which can read the seed (its parent's environment in
/proc, the caller's frames) and can write to POPCORN_FD: GPU MODE's local protocol trusts the
submission's process. The judge therefore also bounds the reported times by its own wall clock.
"""
import argparse
import mmap
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpumode_task  # noqa: E402

MAGIC = b"GPMD1\n"
HEADER = 4096
SEED_AT, SEED_LEN = 8, 24
STATE_AT = 64       # worker: b"started\n", b"done\n"
LENGTH_AT = 128     # worker: length of the output, ASCII, 20 digits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--channel-fd", type=int, default=3)
    ap.add_argument("--reference", required=True, help="the problem's reference.py; its directory is the task's")
    # The directory that holds the problem's shared files (../eval.py): named so the sandbox shows it.
    ap.add_argument("--task-root")
    ap.add_argument("--submission", required=True)
    ap.add_argument("--mode", choices=["test", "benchmark", "leaderboard"], required=True)
    ap.add_argument("--run-dir", required=True)
    ap.add_argument("--python", default=sys.executable or "python3")
    a = ap.parse_args()

    size = os.fstat(a.channel_fd).st_size
    mem = mmap.mmap(a.channel_fd, size)
    # The judge writes its header when it starts, which may be after this process.
    deadline = time.monotonic() + 60
    while mem[:len(MAGIC)] != MAGIC:
        if time.monotonic() > deadline:
            print("gpumode worker: the channel has no judge's header", file=sys.stderr)
            return 2
        time.sleep(0.005)
    seed = mem[SEED_AT:SEED_AT + SEED_LEN].rstrip(b"\0 \n").decode()
    mem[SEED_AT:SEED_AT + SEED_LEN] = b"\0" * SEED_LEN
    mem[STATE_AT:STATE_AT + 8] = b"started\n"
    os.close(a.channel_fd)

    try:
        task_dir = os.path.dirname(os.path.abspath(a.reference))
        task = gpumode_task.load(task_dir)
        gpumode_task.assemble(task_dir, task, a.submission, a.run_dir, a.mode)
    except gpumode_task.TaskError as e:
        print(f"gpumode worker: {e}", file=sys.stderr)
        return 2

    read_end, write_end = os.pipe()
    env = dict(os.environ)
    env["POPCORN_FD"] = str(write_end)
    env["POPCORN_SEED"] = seed
    # -E -s: no PYTHON* variables and no user site-packages (so no usercustomize). Not -I: eval.py imports the
    # task's files and the submission from its own folder, which -I would leave off sys.path.
    child = subprocess.Popen([a.python, "-E", "-s", "eval.py", a.mode, "cases.txt"], cwd=a.run_dir, env=env, pass_fds=(write_end,))
    os.close(write_end)
    seed = None
    out = bytearray()
    limit = size - HEADER - 1
    while True:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        out += chunk[: max(0, limit - len(out))]
    code = child.wait()
    mem[HEADER:HEADER + len(out)] = bytes(out)
    mem[LENGTH_AT:LENGTH_AT + 20] = b"%020d" % len(out)
    mem[STATE_AT:STATE_AT + 8] = b"done\n\0\0\0"
    print(f"gpumode worker: eval.py {a.mode} exited with status {code}", file=sys.stderr)
    return 0 if code in (0, 112) else 1


if __name__ == "__main__":
    sys.exit(main())
