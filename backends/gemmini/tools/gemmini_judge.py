#!/usr/bin/env python3
"""The gemmini target's judge (trusted; run from the per-machine cache).

    gemmini_judge.py lint   --candidate FILE --result FILE
    gemmini_judge.py report --harness H --problem-dir D --include DIR --shape S --key K --cc CC
                            --spike-log FILE [--firesim-log FILE] --build-dir DIR --dim N --result FILE
    gemmini_judge.py probe  --cc PROGRAM --rocc-tests DIR [--spike PROGRAM]
    gemmini_judge.py parse-spike FILE | parse-firesim FILE      (prints JSON; for people and tests)

`report` never trusts the simulated run's own verdict alone: it builds the problem's harness for the
host (-DAUTOCOMP_GEMMINI_HOST, no candidate code), runs it with the same key and requires the
checksums the simulated run printed to be the host's, repeat by repeat.
"""
import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys

# No __pycache__ beside the tools: the target's files are hashed into {backend_hash}.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemmini_output  # noqa: E402

# The default Gemmini configuration (gemmini_params.h): DIM 16, 4 banks x 4096 rows of DIM int8
# values, 1024 accumulator rows of DIM int32 values.
SPAD_KB = 4 * 4096 * 16 // 1024
ACC_KB = 1024 * 16 * 4 // 1024


def write_result(path, status, correct, log, metrics=None, feedback=None, flags=None):
    with open(path, "w") as f:
        json.dump({"status": status, "correct": correct, "metrics": metrics or {}, "feedback": feedback or [],
                   "flags": flags or [], "log": log}, f, indent=1)


def strip_comments_and_strings(text):
    """C source with comments, string and character literals blanked (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


# What a candidate may not use, with the reason the fix prompt gets.
LINT_RULES = [
    (r"^\s*#\s*include\b", "#include: the harness already includes gemmini.h and the C headers"),
    (r"\b(asm|__asm__|__asm)\b", "inline assembly: use the gemmini.h macros (they emit the custom instructions)"),
    (r"\b(read_cycles|rdcycle|rdinstret|rdtime|csr[a-z]*|ac_read_instret)\b", "reads a counter or CSR: the harness times the call"),
    (r"\b(printf|puts|putchar|fputs|fprintf|sprintf|snprintf|write|exit|_exit|abort|setjmp|longjmp|tohost|fromhost)\b",
     "prints, exits or jumps: a kernel only computes"),
    (r"\bmain\s*\(", "defines main: the harness owns main"),
    (r"\b(ac_\w+|AC_\w+|autocomp\w*|AUTOCOMP\w*|gold|\w+_reference)\b", "uses the harness's own checking code or reference"),
    (r"SUBSTITUTE", "contains the harness's SUBSTITUTE markers"),
]


def lint_problems(text):
    code = strip_comments_and_strings(text)
    problems = []
    for pattern, why in LINT_RULES:
        for m in re.finditer(pattern, code, re.MULTILINE):
            line = code.count("\n", 0, m.start()) + 1
            problems.append(f"candidate.c:{line}: '{m.group(0).strip()}': {why}")
            break
    if not re.search(r"\bvoid\s+solution\s*\(", code):
        problems.append("candidate.c: no 'void solution(...)' definition")
    return problems


def cmd_lint(a):
    with open(a.candidate, encoding="utf-8", errors="replace") as f:
        text = f.read()
    problems = lint_problems(text)
    if problems:
        write_result(a.result, "rejected", False, "rejected by the gemmini lint:\n" + "\n".join(problems))
        print("\n".join(problems))
        return 1
    return 0


_OPS = {ast.Add: lambda l, r: l + r, ast.Sub: lambda l, r: l - r, ast.Mult: lambda l, r: l * r,
        ast.Div: lambda l, r: l / r, ast.FloorDiv: lambda l, r: l // r}


def _eval_expression(expr, shape):
    """An arithmetic expression over the shape's keys (problem.yaml's flops/bytes), evaluated safely."""
    tree = ast.parse(expr, mode="eval")

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name) and node.id in shape:
            return shape[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(f"unsupported element in '{expr}'")

    return ev(tree)


def problem_expressions(problem_dir):
    """flops and bytes of problem.yaml (simple `key: "expr"` lines; the loader has validated the file)."""
    out = {}
    try:
        with open(os.path.join(problem_dir, "problem.yaml")) as f:
            for line in f:
                m = re.match(r'^(flops|bytes):\s*"([^"]*)"\s*$', line)
                if m:
                    out[m.group(1)] = m.group(2)
    except OSError:
        pass
    return out


def parse_shape(text):
    shape = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        shape[name] = int(value)
    return shape


def host_checksums(a):
    """Builds the harness for the host with the same key and shape, runs it, returns its parsed report."""
    os.makedirs(a.build_dir, exist_ok=True)
    import gemmini_paste
    with open(os.path.join(a.build_dir, "autocomp_shape.h"), "w") as f:
        f.write(gemmini_paste.shape_header(a.shape, a.key))
    exe = os.path.join(a.build_dir, "host-harness")
    build = subprocess.run([a.cc, "-O1", "-std=gnu99", "-DAUTOCOMP_GEMMINI_HOST", "-I" + a.build_dir, "-I" + a.include,
                            "-I" + a.problem_dir, "-o", exe, a.harness], capture_output=True, text=True, timeout=300)
    if build.returncode != 0:
        raise RuntimeError(f"the host build of {a.harness} failed:\n{build.stderr[-4000:]}")
    run = subprocess.run([exe], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(f"the host harness exited with {run.returncode}:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    return gemmini_output.parse_harness(run.stdout, expect_measurements=False)


def cmd_report(a):
    try:
        with open(a.spike_log, encoding="utf-8", errors="replace") as f:
            spike_text = f.read()
    except OSError as e:
        write_result(a.result, "error", False, f"no spike log: {e}")
        return 2
    try:
        spike = gemmini_output.parse_harness(spike_text)
    except gemmini_output.ParseError as e:
        write_result(a.result, "incorrect", False, f"spike output: {e}\n--- spike output (end) ---\n{spike_text[-3000:]}")
        return 1
    try:
        host = host_checksums(a)
    except (RuntimeError, OSError, subprocess.TimeoutExpired, gemmini_output.ParseError, ValueError) as e:
        write_result(a.result, "error", False, f"judge: {e}")
        return 2

    log = [f"spike: {spike['problem']} {spike['shape']}, {spike['repeats']} repeats with fresh int8 data (key {spike['key']})"]
    if (spike["problem"], spike["shape"], spike["key"]) != (host["problem"], host["shape"], host["key"]):
        write_result(a.result, "incorrect", False, f"the simulated run reports {spike['problem']} {spike['shape']} key={spike['key']}, "
                     f"the judge expected {host['problem']} {host['shape']} key={host['key']}")
        return 1
    if spike["verdict"] != "correct":
        write_result(a.result, "incorrect", False, "\n".join(["Incorrect result"] + spike["failures"]))
        return 1
    for i, (got, want) in enumerate(zip(spike["checksums"], host["checksums"])):
        if got != want:
            write_result(a.result, "incorrect", False, f"repeat {i}: the output's checksum {got} is not the reference's {want} "
                         "(the run printed 'Correct result' but its output differs from the judge's own computation)")
            return 1

    spike_cycles = spike["latencies"][-1]
    metrics = {"spike_cycles": spike_cycles, "spike_instructions": spike["instructions"][-1]}
    feedback = [f"spike, last of {spike['repeats']} repeats: {spike_cycles} cycles (spike retires one instruction per cycle and models "
                f"no memory timing), {spike['instructions'][-1]} instructions; all repeats: "
                + ", ".join(str(v) for v in spike["latencies"])]
    flags = []
    score, source = spike_cycles, "spike"
    if a.firesim_log and os.path.exists(a.firesim_log):
        try:
            with open(a.firesim_log, encoding="utf-8", errors="replace") as f:
                firesim = gemmini_output.parse_firesim_latency(f.read())
            metrics["firesim_cycles"] = firesim
            score, source = firesim, "FireSim"
            feedback.append(f"FireSim: {firesim} cycles (the last 'Generated implementation latency' of the uartlog)")
        except (OSError, gemmini_output.ParseError) as e:
            feedback.append(f"FireSim: no cycles ({e}); scored on spike")
    metrics["cycles"] = score

    shape = parse_shape(a.shape)
    exprs = problem_expressions(a.problem_dir)
    try:
        if "flops" in exprs and score > 0:
            macs = _eval_expression(exprs["flops"], shape) / 2
            peak = a.dim * a.dim
            feedback.append(f"{int(macs)} int8 MACs: {macs / score:.1f} MACs per {source} cycle; the {a.dim}x{a.dim} array peaks at {peak}"
                            + (f" ({100 * macs / score / peak:.1f} % of peak)" if source == "FireSim" else ""))
            if source == "FireSim" and macs / score > peak:
                flags.append(f"faster than the array's peak: {macs / score:.0f} MACs per cycle > {peak}")
        if "bytes" in exprs:
            kb = _eval_expression(exprs["bytes"], shape) / 1024
            feedback.append(f"operands and result: {kb:.1f} KB; scratchpad {SPAD_KB} KB (4 banks), accumulator {ACC_KB} KB"
                            + (": everything fits on chip at once" if kb <= SPAD_KB else ": it must be tiled"))
    except (ValueError, ZeroDivisionError, SyntaxError) as e:
        feedback.append(f"(no roofline figures: {e})")
    if score < 100:
        flags.append(f"implausibly short: {score} cycles for the whole call")
    log.append(f"correct in every repeat: the checksums match the judge's host run; score {score} {source} cycles")
    write_result(a.result, "ok", True, "\n".join(log), metrics, feedback, flags)
    return 0


def cmd_probe(a):
    missing = []
    if not shutil.which(a.cc):
        missing.append(f"the RISC-V compiler '{a.cc}' is not on PATH (setting toolchain)")
    if a.spike and not shutil.which(a.spike):
        missing.append(f"spike '{a.spike}' is not found (setting spike, AUTOCOMP_GEMMINI_SPIKE=/path/to/spike)")
    for rel in ("include/gemmini.h", "include/gemmini_params.h", "riscv-tests/benchmarks/common/test.ld",
                "riscv-tests/benchmarks/common/crt.S", "riscv-tests/benchmarks/common/syscalls.c"):
        if not os.path.exists(os.path.join(a.rocc_tests, rel)):
            missing.append(f"no {rel} under the gemmini-rocc-tests checkout '{a.rocc_tests}' (setting rocc_tests)")
            break
    if missing:
        print("; ".join(missing))
        return 1
    print("ok")
    return 0


def cmd_parse(a, firesim):
    with open(a.file, encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        out = {"latency_cycles": gemmini_output.parse_firesim_latency(text)} if firesim else gemmini_output.parse_harness(text)
    except gemmini_output.ParseError as e:
        print(f"{a.file}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("lint")
    s.add_argument("--candidate", required=True)
    s.add_argument("--result", required=True)
    s = sub.add_parser("report")
    for name in ("--harness", "--problem-dir", "--include", "--shape", "--key", "--cc", "--spike-log", "--build-dir", "--result"):
        s.add_argument(name, required=True)
    s.add_argument("--firesim-log")
    s.add_argument("--dim", type=int, default=16)
    s = sub.add_parser("probe")
    s.add_argument("--cc", required=True)
    s.add_argument("--spike")
    s.add_argument("--rocc-tests", required=True)
    for name in ("parse-spike", "parse-firesim"):
        sub.add_parser(name).add_argument("file")
    a = p.parse_args()
    if a.cmd == "lint":
        return cmd_lint(a)
    if a.cmd == "report":
        return cmd_report(a)
    if a.cmd == "probe":
        return cmd_probe(a)
    return cmd_parse(a, a.cmd == "parse-firesim")


if __name__ == "__main__":
    sys.exit(main())
