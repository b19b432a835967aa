#!/usr/bin/env python3
"""The gemmini target's judge (trusted; run from the per-machine cache).

    gemmini_judge.py lint   --candidate FILE --result FILE
    gemmini_judge.py report --harness H --problem-dir D --include DIR --shape S --key K --cc CC
                            --spike-log FILE [--firesim-log FILE] --build-dir DIR --dim N --result FILE
                            [--metric instructions|cycles] [--firesim-dir DIR]
    gemmini_judge.py probe  --cc PROGRAM --rocc-tests DIR [--spike PROGRAM] [--libc auto|picolibc|newlib]
    gemmini_judge.py rank-check --metric instructions|cycles --spike-rank off|instructions --firesim-dir DIR
    gemmini_judge.py parse-spike FILE | parse-firesim FILE      (prints JSON; for people and tests)

`report` never trusts the simulated run's own verdict alone: it builds the problem's harness for the
host (-DAUTOCOMP_GEMMINI_HOST, no candidate code), runs it with the same key and requires the
checksums the simulated run printed to be the host's, repeat by repeat.

The score is the setting `metric`: `instructions`, spike's count (its cycle counter counts retired
instructions: a Gemmini instruction, one loop_ws included, is one), or `cycles`, FireSim's. A spike count
is never called cycles; the peak check (at most DIM x DIM MACs per cycle) applies to both.
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
HERE = os.path.dirname(os.path.abspath(__file__))
# The judge kit sits beside the tools in the cache copy; run from the source tree, it is backends/common/python.
sys.path[:0] = [HERE] if os.path.isdir(os.path.join(HERE, 'autocomp_kit')) else [HERE, os.path.join(HERE, '..', '..', 'common', 'python')]
import gemmini_output  # noqa: E402
from autocomp_kit.results import read_untrusted, write_result  # noqa: E402

# The default Gemmini configuration (gemmini_params.h): DIM 16, 4 banks x 4096 rows of DIM int8
# values, 1024 accumulator rows of DIM int32 values.
SPAD_KB = 4 * 4096 * 16 // 1024
# The evaluator's "a program or tool of this machine is missing": an `error`, never a verdict on the candidate.
MACHINE_FAULT = 127
ACC_KB = 1024 * 16 * 4 // 1024


# What the judge reads of the simulated run's output (the candidate's program prints into it): at most this.
SPIKE_LOG_LIMIT = 16 << 20


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
    if a.metric not in ("instructions", "cycles"):
        why = f"setting metric is '{a.metric}': it must be 'instructions' (spike) or 'cycles' (FireSim)"
        write_result(a.result, "error", False, why)
        print(why)
        return MACHINE_FAULT
    try:
        spike_text, _ = read_untrusted(a.spike_log, SPIKE_LOG_LIMIT)
    except OSError as e:
        write_result(a.result, "error", False, f"no spike log: {e}")
        print(f"no spike log: {e}")
        return MACHINE_FAULT
    try:
        spike = gemmini_output.parse_harness(spike_text)
    except gemmini_output.ParseError as e:
        write_result(a.result, "incorrect", False, f"spike output: {e}\n--- spike output (end) ---\n{spike_text[-3000:]}")
        return 1
    try:
        host = host_checksums(a)
    except (RuntimeError, OSError, subprocess.TimeoutExpired, gemmini_output.ParseError, ValueError) as e:
        write_result(a.result, "error", False, f"judge: {e}")
        print(f"judge: {e}")
        return MACHINE_FAULT

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

    # On spike the read_cycles() delta is a count of retired instructions (spike's cycle counter advances
    # once per instruction; a Gemmini instruction, one loop_ws included, is one): it is named as such.
    spike_count = spike["latencies"][-1]
    metrics = {"instructions": spike_count, "spike_rdcycle": spike_count, "spike_rdinstret": spike["instructions"][-1]}
    feedback = [f"spike, last of {spike['repeats']} repeats: {spike_count} retired instructions (read_cycles() on spike counts "
                f"instructions, not cycles: spike models no timing and one Gemmini instruction, a whole loop_ws included, counts as one); "
                "all repeats: " + ", ".join(str(v) for v in spike["latencies"])]
    flags = []
    firesim = None
    if a.firesim_log and os.path.exists(a.firesim_log):
        try:
            firesim = gemmini_output.parse_firesim_latency(read_untrusted(a.firesim_log, SPIKE_LOG_LIMIT)[0])
            metrics["firesim_cycles"] = firesim
            metrics["cycles"] = firesim
            feedback.append(f"FireSim: {firesim} cycles (the last 'Generated implementation latency' of the uartlog)")
        except (OSError, gemmini_output.ParseError) as e:
            feedback.append(f"FireSim: no cycles ({e})")
    if a.metric == "cycles" and firesim is None:
        # The score asked for does not exist: the machine's configuration, not the candidate.
        why = ("metric 'cycles' needs FireSim's uartlog, and this evaluation has none (setting firesim_dir "
               f"'{a.firesim_dir or ''}'; the firesim step's output says why). Spike counts instructions, not cycles: "
               "set metric: instructions to score spike's count.")
        write_result(a.result, "error", False, why, metrics, feedback)
        print(why)
        return MACHINE_FAULT
    score, unit = (firesim, "cycles") if a.metric == "cycles" else (spike_count, "instructions")

    shape = parse_shape(a.shape)
    exprs = problem_expressions(a.problem_dir)
    try:
        if "flops" in exprs:
            macs = _eval_expression(exprs["flops"], shape) / 2
            peak = a.dim * a.dim
            floor_cycles = -(-int(macs) // peak)
            # The peak check, on both simulators: a call cannot take fewer cycles than its MACs over the
            # array's peak (DIM x DIM MACs per cycle).
            if firesim is not None and firesim > 0:
                feedback.append(f"{int(macs)} int8 MACs: {macs / firesim:.1f} MACs per FireSim cycle; the {a.dim}x{a.dim} array peaks at "
                                f"{peak} ({100 * macs / firesim / peak:.1f} % of peak)")
                if macs / firesim > peak:
                    flags.append(f"faster than the array's peak: {macs / firesim:.0f} MACs per cycle > {peak} (FireSim: {firesim} cycles "
                                 f"for {int(macs)} MACs, at least {floor_cycles} are needed)")
            if spike_count > 0:
                feedback.append(f"{int(macs)} int8 MACs in {spike_count} retired instructions on spike ({macs / spike_count:.1f} MACs per "
                                f"instruction, not per cycle); at the {a.dim}x{a.dim} array's peak of {peak} MACs per cycle the call "
                                f"needs at least {floor_cycles} cycles")
                if spike_count < floor_cycles and a.metric == "instructions":
                    flags.append(f"spike's count is not a cycle count: {spike_count} instructions for {int(macs)} MACs would be "
                                 f"{macs / spike_count:.0f} MACs per cycle, {macs / spike_count / peak:.1f}x the {a.dim}x{a.dim} array's "
                                 f"peak of {peak}; the call needs at least {floor_cycles} cycles")
        if "bytes" in exprs:
            kb = _eval_expression(exprs["bytes"], shape) / 1024
            feedback.append(f"operands and result: {kb:.1f} KB; scratchpad {SPAD_KB} KB (4 banks), accumulator {ACC_KB} KB"
                            + (": everything fits on chip at once" if kb <= SPAD_KB else ": it must be tiled"))
    except (ValueError, ZeroDivisionError, SyntaxError) as e:
        feedback.append(f"(no roofline figures: {e})")
    if score < 100:
        flags.append(f"implausibly short: {score} {unit} for the whole call")
    log.append(f"correct in every repeat: the checksums match the judge's host run; score {score} {unit} "
               + ("(FireSim)" if unit == "cycles" else "(spike: retired instructions, not cycles)"))
    write_result(a.result, "ok", True, "\n".join(log), metrics, feedback, flags)
    return 0


def cmd_rank_check(a):
    """Whether a search may rank by the configured metric here (the target's hardware_check)."""
    if a.metric == "cycles":
        config = os.path.join(a.firesim_dir, "deploy", "config_runtime.yaml") if a.firesim_dir else ""
        if not config or not os.path.exists(config):
            print("metric 'cycles' needs FireSim: setting firesim_dir "
                  + (f"'{a.firesim_dir}' has no deploy/config_runtime.yaml" if a.firesim_dir else "is empty")
                  + " (AUTOCOMP_GEMMINI_FIRESIM_DIR); spike counts instructions, not cycles (metric: instructions)")
            return 1
        print("ok: ranked by FireSim cycles")
        return 0
    if a.metric != "instructions":
        print(f"setting metric is '{a.metric}': it must be 'instructions' (spike) or 'cycles' (FireSim)")
        return 1
    if a.spike_rank != "instructions":
        print("spike counts retired instructions, not cycles (one loop_ws is one instruction), so this target only checks "
              "correctness on spike: to let a search optimize instruction counts set spike_rank: instructions "
              "(AUTOCOMP_GEMMINI_SPIKE_RANK=instructions); for cycles set metric: cycles with FireSim (firesim_dir)")
        return 1
    print("ok: ranked by spike's retired-instruction count (spike_rank: instructions), not by cycles")
    return 0


def libc_problem(cc, libc):
    """Why the bare-metal compiler cannot find its C headers with the setting libc's specs file, or None."""
    specs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "specs", f"libc-{libc}.specs")
    if not os.path.exists(specs):
        return f"setting libc is '{libc}': it must be auto, picolibc or newlib"
    try:
        run = subprocess.run([cc, "-specs=" + specs, "-E", "-x", "c", "-o", os.devnull, "-"], input="#include <stdint.h>\n",
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"the RISC-V compiler '{cc}' cannot be run: {e}"
    if run.returncode != 0:
        lines = run.stderr.strip().splitlines() or ["(no message)"]
        last = next((l for l in lines if "error" in l), lines[-1]).strip()
        hint = ("Debian's gcc-riscv64-unknown-elf has no C library of its own: install picolibc-riscv64-unknown-elf "
                "(packaging/install-deps.sh --gemmini)") if libc != "newlib" else "set libc: auto for picolibc"
        return f"the RISC-V compiler '{cc}' finds no <stdint.h> with libc '{libc}' ({last}): {hint}"
    return None


def cmd_probe(a):
    missing = []
    if not shutil.which(a.cc):
        missing.append(f"the RISC-V compiler '{a.cc}' is not on PATH (setting toolchain)")
    if a.spike and not shutil.which(a.spike):
        missing.append(f"spike '{a.spike}' is not found (setting spike, AUTOCOMP_GEMMINI_SPIKE=/path/to/spike)")
    for rel in ("include/gemmini.h", "include/gemmini_params.h", "rocc-software/src/xcustom.h", "riscv-tests/benchmarks/common/test.ld",
                "riscv-tests/benchmarks/common/crt.S", "riscv-tests/benchmarks/common/syscalls.c", "riscv-tests/env/encoding.h"):
        if not os.path.exists(os.path.join(a.rocc_tests, rel)):
            missing.append(f"no {rel} under the gemmini-rocc-tests checkout '{a.rocc_tests}' (setting rocc_tests; its submodules too)")
            break
    if not missing:
        problem = libc_problem(a.cc, a.libc)
        if problem:
            missing.append(problem)
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
    s.add_argument("--firesim-dir", default="")
    s.add_argument("--dim", type=int, default=16)
    s.add_argument("--metric", default="instructions")
    s = sub.add_parser("rank-check")
    s.add_argument("--metric", required=True)
    s.add_argument("--spike-rank", required=True)
    s.add_argument("--firesim-dir", default="")
    s = sub.add_parser("probe")
    s.add_argument("--cc", required=True)
    s.add_argument("--spike")
    s.add_argument("--rocc-tests", required=True)
    s.add_argument("--libc", default="auto")
    for name in ("parse-spike", "parse-firesim"):
        sub.add_parser(name).add_argument("file")
    a = p.parse_args()
    if a.cmd == "lint":
        return cmd_lint(a)
    if a.cmd == "report":
        return cmd_report(a)
    if a.cmd == "probe":
        return cmd_probe(a)
    if a.cmd == "rank-check":
        return cmd_rank_check(a)
    return cmd_parse(a, a.cmd == "parse-firesim")


if __name__ == "__main__":
    sys.exit(main())
