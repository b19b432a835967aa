#!/usr/bin/env python3
"""gpumode_judge.py — the gpumode target's judge (trusted; Python 3 standard library only).

    gpumode_judge.py run --channels 3 --worker-pids P --seed S --reference DIR/reference.py --mode test|benchmark|leaderboard
                         --timeout SECONDS --result result.json [--raw popcorn.txt]
    gpumode_judge.py parse --text FILE --result result.json [--reference DIR/reference.py --mode benchmark]
    gpumode_judge.py probe

run: hands the worker (gpumode_worker.py) the evaluation's seed through shared memory, waits for it
with its own clock, then parses what eval.py reported (popcorn_output.py) and writes result.json.
A test run writes result.json only when it fails. Checks beyond the harness's own: the cases reported
are the ones task.yml lists, in order; each mean lies within its best and worst; and the time the
cases claim (mean x runs, summed) fits in the wall time the judge measured.
parse: the same verdict for saved output (eval.py's key: value lines, or popcorn-cli's report).
probe: exit 0 when torch sees a CUDA device, else 1 with the reason as the last line.
Exit status: 0 passed, 1 the candidate failed (result.json says why), 2 a fault of the harness.
"""
import mmap
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The kit sits beside the tools in the cache copy; run from the source tree, it is backends/common/python.
sys.path[:0] = [HERE] if os.path.isdir(os.path.join(HERE, 'autocomp_kit')) else [HERE, os.path.join(HERE, '..', '..', 'common', 'python')]
import gpumode_task  # noqa: E402
import popcorn_output  # noqa: E402
from autocomp_kit import results  # noqa: E402
from autocomp_kit.channel import process_alive as alive  # noqa: E402
from gpumode_worker import HEADER, LENGTH_AT, MAGIC, SEED_AT, SEED_LEN, STATE_AT  # noqa: E402


def write_result(path, status, correct, metrics=None, feedback=None, flags=None, log=""):
    results.write_result(path, status, correct, log, metrics, feedback, flags)


def options(argv):
    opts = {}
    for i in range(0, len(argv), 2):
        if not argv[i].startswith("--") or i + 1 >= len(argv):
            raise SystemExit(f"gpumode judge: bad argument {argv[i]}")
        opts[argv[i][2:]] = argv[i + 1]
    return opts


def case_feedback(cases):
    lines = []
    for c in cases:
        text = f"{c['spec'] or 'case ' + str(c['index'])}: {popcorn_output.format_us(c['mean'])}"
        if c.get("err") is not None:
            text += f" ± {c['err'] / 1e3:.3g}"
        if c.get("best") is not None and c.get("worst") is not None:
            text += f" (best {popcorn_output.format_us(c['best'])}, worst {popcorn_output.format_us(c['worst'])}"
            text += f", {int(c['runs'])} runs)" if c.get("runs") else ")"
        lines.append(text)
    return lines


def judge_text(text, result, expected, mode, wall_s=None):
    v = popcorn_output.verdict(text, expected if mode != "test" else None)
    if v["status"] == "error":
        write_result(result, "crash", False, log="the harness's report is unusable: " + v["log"] + "\n--- report ---\n" + text[-3000:])
        return 1
    if v["status"] == "incorrect":
        write_result(result, "incorrect", False, log=v["log"][:8000])
        return 1
    if mode == "test":
        if "test-count" not in text:
            write_result(result, "crash", False, log="the test run reported no test results")
            return 1
        return 0
    cases = v["cases"]
    claimed_s = sum(c["mean"] * c["runs"] for c in cases if c.get("runs")) / 1e9
    if wall_s is not None and claimed_s > wall_s:
        write_result(result, "rejected", False, flags=[f"timings exceed the judge's clock: {claimed_s:.3f} s claimed in {wall_s:.3f} s"],
                     log=f"REJECTED: the cases' timed runs add up to {claimed_s:.3f} s, but the whole run took {wall_s:.3f} s by the judge's clock")
        return 1
    metrics = {"geomean_us": v["geomean_us"], "cases": len(cases)}
    if wall_s is not None:
        metrics["judge_wall_s"] = round(wall_s, 3)
    feedback = case_feedback(cases)
    feedback.append(f"score: geometric mean of {len(cases)} cases' mean times = {v['geomean_us']:.4g} µs (GPU MODE's {mode} mode; "
                    "CUDA events, L2 cleared per run as its eval.py does)")
    write_result(result, "ok", True, metrics=metrics, feedback=feedback, log=f"{len(cases)} benchmark cases passed their checks")
    return 0


def expected_specs(task_dir, mode):
    if not task_dir:
        return None
    task = gpumode_task.load(task_dir)
    cases = task["tests"] if mode == "test" else task["benchmarks"]
    return [gpumode_task.spec_line(c) for c in cases]


def mode_run(o):
    fd = int(o["channels"].split(",")[0])
    pid = int(o.get("worker-pids", "0").split(",")[0] or 0)
    mode = o["mode"]
    expected = expected_specs(os.path.dirname(os.path.abspath(o["reference"])), mode)
    size = os.fstat(fd).st_size
    mem = mmap.mmap(fd, size)
    seed = str(int(o["seed"])).encode()
    mem[SEED_AT:SEED_AT + SEED_LEN] = seed.ljust(SEED_LEN, b"\0")
    mem[0:len(MAGIC)] = MAGIC
    start = time.monotonic()
    timeout = float(o.get("timeout", "600"))
    while mem[STATE_AT:STATE_AT + 5] != b"done\n":
        if pid and not alive(pid):
            time.sleep(0.05)
            if mem[STATE_AT:STATE_AT + 5] == b"done\n":
                break
            write_result(o["result"], "crash", False, log="the worker (eval.py) exited without a report: see its output below")
            return 1
        if time.monotonic() - start > timeout:
            write_result(o["result"], "timeout", False, log=f"eval.py {mode} did not finish within {timeout:.0f} s")
            return 1
        time.sleep(0.02)
    wall_s = time.monotonic() - start
    try:
        length = int(mem[LENGTH_AT:LENGTH_AT + 20].decode())
    except ValueError:
        length = -1
    if length < 0 or length > size - HEADER:
        write_result(o["result"], "crash", False, log="the worker's report length is not valid")
        return 1
    text = bytes(mem[HEADER:HEADER + length]).decode("utf-8", errors="replace")
    if "raw" in o:
        with open(o["raw"], "w", encoding="utf-8") as f:
            f.write(text)
    return judge_text(text, o["result"], expected, mode, wall_s)


def mode_parse(o):
    with open(o["text"], encoding="utf-8", errors="replace") as f:
        text = f.read(popcorn_output.MAX_TEXT)
    mode = o.get("mode", "benchmark")
    task_dir = os.path.dirname(os.path.abspath(o["reference"])) if "reference" in o else None
    return judge_text(text, o["result"], expected_specs(task_dir, mode), mode)


def mode_probe():
    try:
        import torch
    except ImportError as e:
        print(f"no PyTorch in this Python ({sys.executable}): {e}")
        return 1
    if not torch.cuda.is_available():
        print(f"PyTorch {torch.__version__} sees no CUDA device (built with CUDA: {torch.version.cuda or 'no'})")
        return 1
    print(f"PyTorch {torch.__version__} with CUDA {torch.version.cuda}: {torch.cuda.get_device_name(0)}")
    return 0


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    mode = sys.argv[1]
    try:
        if mode == "probe":
            return mode_probe()
        o = options(sys.argv[2:])
        if mode == "run":
            return mode_run(o)
        if mode == "parse":
            return mode_parse(o)
        print(f"gpumode judge: unknown mode {mode}", file=sys.stderr)
        return 2
    except (gpumode_task.TaskError, KeyError, OSError, ValueError) as e:
        print(f"gpumode judge ({mode}): {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
