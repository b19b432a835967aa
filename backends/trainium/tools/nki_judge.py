#!/usr/bin/env python3
"""The trainium target's judge (trusted; run from the per-machine cache). It never imports the
candidate: it reads it as text, draws the inputs, computes the reference itself with NumPy, compares,
and times the candidate's NEFF with neuron-profile.

    nki_judge.py static  --candidate FILE --entry NAME --result FILE
    nki_judge.py check   --channels 3 --worker-pids PID --problem-dir D --shape S --seed N --tolerance T
                         --rounds 3 --timer profile|benchmark --timeout S --report check.json --result FILE
    nki_judge.py profile --neff FILE [--reference-neff FILE] --out-dir DIR --num-exec 20 --profile-nth 10
                         --timer profile|benchmark --check check.json --result FILE
    nki_judge.py probe --python PYTHON              (the target's available_check)
    nki_judge.py probe-device                       (its hardware_check)
    nki_judge.py parse-profile FILE | parse-benchmark FILE   (prints JSON; for people and tests)
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

# No __pycache__ beside the tools: the target's files are hashed into {backend_hash}.
sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
# The kit sits beside the tools in the cache copy; run from the source tree, it is backends/common/python.
sys.path[:0] = [HERE] if os.path.isdir(os.path.join(HERE, 'autocomp_kit')) else [HERE, os.path.join(HERE, '..', '..', 'common', 'python')]
import nki_output  # noqa: E402
import nki_static  # noqa: E402
from autocomp_kit import cli, compare as kit_compare, results  # noqa: E402


def write_result(path, status, correct, log, metrics=None, feedback=None, flags=None):
    results.write_result(path, status, correct, log, metrics, feedback, flags)


def parse_pairs(text, kind=float):
    return {k: kind(v) for k, v in (item.split("=") for item in text.split(",") if item)}


def cmd_static(a):
    with open(a.candidate, encoding="utf-8", errors="replace") as f:
        problems = nki_static.static_problems(f.read(), a.entry)
    if problems:
        write_result(a.result, "rejected", False, "rejected by the NKI static check:\n" + "\n".join(problems))
        print("\n".join(problems))
        return 1
    return 0


def compare(expected, got, rtol, atol):
    """None when `got` matches (bit-exact when rtol = atol = 0), else what differs (autocomp_kit.compare's
    verdict, in this target's words)."""
    d = kit_compare.difference(expected, got, rtol, atol)
    if d is None:
        return None
    if d['kind'] != 'values':
        return kit_compare.describe(d, 'the output', rtol, atol)
    if d['exact']:
        return (f"{d['bad']} element(s) differ (bit-exact comparison); at {tuple(d['where'])}: {d['got']!r}, "
                f"expected {d['expected']!r}")
    return (f"{d['bad']} element(s) outside rtol={rtol:g}, atol={atol:g}" + (f", {d['garbage']} of them non-finite" if d['garbage'] else "")
            + f"; worst at {tuple(d['where'])}: {d['got']:.6g}, expected {d['expected']:.6g}")


def cmd_check(a):
    import numpy as np
    import nki_channel
    spec = importlib.util.spec_from_file_location("problem_reference", os.path.join(a.problem_dir, "reference.py"))
    problem = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(problem)
    shape = parse_pairs(a.shape, int)
    tol = parse_pairs(a.tolerance)
    rtol, atol = tol.get("rtol", 0.0), tol.get("atol", 0.0)
    mem = nki_channel.open_channel(int(a.channels.split(",")[0]))
    pid = int(a.worker_pids.split(",")[0])
    report = {"shape": a.shape, "rounds": a.rounds, "rtol": rtol, "atol": atol}
    try:
        for r in range(a.rounds):
            rng = np.random.default_rng([a.seed, r])
            inputs = problem.make_inputs(shape, rng)
            expected = problem.reference(*[x.copy() for x in inputs])
            status, payload = nki_channel.request(mem, nki_channel.OP_RUN, nki_channel.pack_arrays(inputs), pid, a.timeout)
            if status != nki_channel.STATUS_OK:
                write_result(a.result, "crash", False, f"round {r}: the kernel failed on the device:\n{payload.decode(errors='replace')}")
                return 1
            outputs = nki_channel.unpack_arrays(payload)
            if len(outputs) != 1:
                write_result(a.result, "incorrect", False, f"round {r}: {len(outputs)} outputs, expected 1")
                return 1
            why = compare(np.asarray(expected), outputs[0], rtol, atol)
            if why:
                write_result(a.result, "incorrect", False, f"round {r} of {a.rounds} (fresh random inputs at {a.shape}): {why}")
                return 1
        if a.timer == "benchmark":
            inputs = problem.make_inputs(shape, np.random.default_rng([a.seed, a.rounds]))
            status, payload = nki_channel.request(mem, nki_channel.OP_BENCHMARK, nki_channel.pack_arrays(inputs), pid, a.timeout)
            text = payload.decode(errors="replace")
            if status != nki_channel.STATUS_OK:
                write_result(a.result, "crash", False, f"nki.benchmark failed:\n{text}")
                return 1
            report["benchmark_ms"] = nki_output.parse_benchmark_latency(text)
        nki_channel.request(mem, nki_channel.OP_QUIT, b"", pid, 60)
    except (nki_channel.ChannelError, nki_output.ParseError, ValueError) as e:
        write_result(a.result, "crash", False, f"the worker: {e}")
        return 1
    with open(a.report, "w") as f:
        json.dump(report, f)
    return 0


def profile_ms(neff, out_dir, label, num_exec, nth, timeout):
    """neuron-profile capture, then view --output-format=summary-json of the steady-state execution."""
    os.makedirs(out_dir, exist_ok=True)
    ntff = os.path.join(out_dir, f"{label}.ntff")
    cap = subprocess.run(["neuron-profile", "capture", "-n", neff, "-s", ntff, "--num-exec", str(num_exec),
                          "--profile-nth-exec", str(nth)], capture_output=True, text=True, timeout=timeout)
    if cap.returncode != 0:
        raise RuntimeError(f"neuron-profile capture ({label}) exited with {cap.returncode}:\n{cap.stderr[-3000:]}")
    # capture writes <base>_exec_<n>.ntff for each profiled execution
    base = ntff[: -len(".ntff")]
    steady = next((p for p in (f"{base}_exec_{num_exec}.ntff", f"{base}_exec_{nth}.ntff", ntff) if os.path.exists(p)), None)
    if steady is None:
        raise RuntimeError(f"neuron-profile capture ({label}) left no {base}_exec_N.ntff")
    view = subprocess.run(["neuron-profile", "view", "-n", neff, "-s", steady, "--output-format=summary-json"],
                          capture_output=True, text=True, timeout=timeout)
    if view.returncode != 0:
        raise RuntimeError(f"neuron-profile view ({label}) exited with {view.returncode}:\n{view.stderr[-3000:]}")
    with open(os.path.join(out_dir, f"{label}-summary.json"), "w") as f:
        f.write(view.stdout)
    return nki_output.parse_profile_summary(view.stdout)


def cmd_profile(a):
    try:
        with open(a.check) as f:
            check = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        write_result(a.result, "error", False, f"no correctness report from the check step: {e}")
        return 2
    feedback, flags, metrics = [], [], {}
    try:
        if a.timer == "benchmark":
            ms = check["benchmark_ms"]
            feedback.append(f"nki.benchmark(warmup=2, iters=10): P99 {ms:.4f} ms, measured in the candidate's process (the fallback timer)")
            flags.append("timed by nki.benchmark inside the candidate's worker, not by neuron-profile")
        else:
            ms, name, summary = profile_ms(a.neff, a.out_dir, "candidate", a.num_exec, a.profile_nth, a.timeout)
            feedback.append(f"neuron-profile: total_time {ms:.4f} ms of execution {a.num_exec} (profiled every {a.profile_nth}th of {a.num_exec})")
            extra = {k: v for k, v in summary.items() if k != "total_time" and isinstance(v, (int, float)) and not isinstance(v, bool)}
            if extra:
                feedback.append("profile summary: " + ", ".join(f"{k}={v:.4g}" for k, v in sorted(extra.items())[:12]))
            if a.reference_neff and os.path.exists(a.reference_neff):
                ref_ms = profile_ms(a.reference_neff, a.out_dir, "reference", a.num_exec, a.profile_nth, a.timeout)[0]
                metrics["reference_ms"] = ref_ms
                feedback.append(f"the problem's starting kernel: {ref_ms:.4f} ms ({ref_ms / ms:.2f}x the candidate's speed)")
    except (RuntimeError, subprocess.TimeoutExpired, nki_output.ParseError, KeyError) as e:
        write_result(a.result, "error", False, f"timing failed: {e}")
        return 2
    metrics["latency_ms"] = ms
    tol = "bit-exact" if check["rtol"] == 0 and check["atol"] == 0 else f"rtol={check['rtol']:g}, atol={check['atol']:g}"
    write_result(a.result, "ok", True, f"correct in {check['rounds']} rounds of fresh random inputs at {check['shape']} ({tol}); "
                 f"{ms:.4f} ms", metrics, feedback, flags)
    return 0


def cmd_probe(a):
    code = "import numpy, neuronxcc.nki, neuronxcc.nki.language, neuronxcc.nki.isa"
    try:
        p = subprocess.run([a.python, "-c", code], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"{a.python}: {e}")
        return 1
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        print(f"{a.python} cannot import the NKI modules of the Neuron SDK (neuronx-cc) and NumPy: {last}")
        return 1
    print("ok")
    return 0


def cmd_probe_device(_a):
    devices = [d for d in os.listdir("/dev") if d.startswith("neuron") and d[6:].isdigit()] if os.path.isdir("/dev") else []
    if not devices:
        print("no Neuron device (/dev/neuron*): compiling works here, running and timing needs a Trn1/Trn2 or Inf2 instance")
        return 1
    print(f"{len(devices)} Neuron device(s)")
    return 0


def parse_profile(text):
    ms, name, _ = nki_output.parse_profile_summary(text)
    return {"latency_ms": ms, "graph": name}


def cmd_parse(a, kind):
    parse = parse_profile if kind == "profile" else (lambda text: {"latency_ms": nki_output.parse_benchmark_latency(text)})
    return cli.print_parsed(a.file, parse, nki_output.ParseError)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("static")
    s.add_argument("--candidate", required=True)
    s.add_argument("--entry", default="solution")
    s.add_argument("--result", required=True)
    s = sub.add_parser("check")
    for name in ("--channels", "--worker-pids", "--problem-dir", "--shape", "--tolerance", "--report", "--result"):
        s.add_argument(name, required=True)
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--rounds", type=int, default=3)
    s.add_argument("--timer", choices=("profile", "benchmark"), default="profile")
    s.add_argument("--timeout", type=float, default=300)
    s = sub.add_parser("profile")
    for name in ("--neff", "--out-dir", "--check", "--result"):
        s.add_argument(name, required=True)
    s.add_argument("--reference-neff")
    s.add_argument("--num-exec", type=int, default=20)
    s.add_argument("--profile-nth", type=int, default=10)
    s.add_argument("--timer", choices=("profile", "benchmark"), default="profile")
    s.add_argument("--timeout", type=float, default=300)
    s = sub.add_parser("probe")
    s.add_argument("--python", default="python3")
    sub.add_parser("probe-device")
    for name in ("parse-profile", "parse-benchmark"):
        sub.add_parser(name).add_argument("file")
    a = p.parse_args()
    handlers = {"static": cmd_static, "check": cmd_check, "profile": cmd_profile, "probe": cmd_probe, "probe-device": cmd_probe_device,
                "parse-profile": lambda x: cmd_parse(x, "profile"), "parse-benchmark": lambda x: cmd_parse(x, "benchmark")}
    return handlers[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
