"""The judge of a tpu evaluation (trusted; a judge step: reads the candidate's file as data, never imports
or runs it, writes only its own directory).

  tpu_judge.py static --candidate FILE --result RESULT
      Before anything runs: Python syntax, a function `solution`, a pl.pallas_call, no try/except, no
      `interpret=` (the harness decides), imports from jax, numpy and a few pure standard modules only,
      no file, process, frame or host-callback access.
  tpu_judge.py check --candidate FILE --reference FILE --shapes S --seed N --tolerance T --channels 3 ...
      Draws inputs from its secret seed (the problem's make_inputs(shape, rng)), computes reference(*inputs)
      itself on the CPU, has the worker run solution(*inputs) (on a TPU, or in Pallas' TPU interpreter
      without one), compares with allclose and checks that the inputs are unchanged; a candidate whose
      jaxpr runs every compute primitive of the reference outside its Pallas kernels is a fallback.
  tpu_judge.py bench --bench-shape S --warmup 3 --trials 10 ... --out TIMING
      On a TPU only: warm-ups, then timed calls, each timed by this process's clock from its word to the
      worker's (the worker blocks until the result is ready); the output of the last one is checked again.
      Writes the report (tpu_output.py's format: `Latency: X ms`, the median).
  tpu_judge.py report --check CHECK.json --timing TIMING --result RESULT
      Parses the report into result.json.

The judge's own JAX runs on the CPU (JAX_PLATFORMS=cpu): a TPU belongs to one process at a time, the
worker's. Exit status: 0 passed, 1 failed (result.json says why), 2 a fault of the harness.
"""
import argparse
import ast
import json
import os
import statistics
import sys
import time

os.environ['JAX_PLATFORMS'] = 'cpu'
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tpu_common as tc  # noqa: E402
import tpu_output  # noqa: E402

# Outside its pallas_call kernels a solution may only lay data out: reshape, transpose, pad, change the element
# type, slice, broadcast and join. Containers (jit, custom_jvp, ...) are opened and their contents held to the
# same list. Everything else (arithmetic, reductions, dots, host callbacks by any spelling) is work outside
# the kernels.
LAYOUT_PRIMITIVES = {'reshape', 'transpose', 'pad', 'convert_element_type', 'slice', 'dynamic_slice', 'squeeze',
                     'expand_dims', 'broadcast_in_dim', 'concatenate', 'copy', 'copy_p', 'rev', 'iota'}
CONTAINER_PRIMITIVES = {'pjit', 'jit', 'closed_call', 'core_call', 'custom_jvp_call', 'custom_vjp_call',
                        'custom_vjp_call_jaxpr', 'remat', 'checkpoint'}


def guard_policy(py_guard):
    """The names a Pallas candidate may use (py_guard resolves every imported name to its full path)."""
    return py_guard.Policy(
        imports={'jax', 'numpy', 'functools', 'math', '__future__'},
        modules={'jax.numpy', 'jax.lax', 'jax.experimental', 'jax.experimental.pallas', 'jax.experimental.pallas.tpu'},
        paths={'jax.jit', 'jax.Array', 'jax.ShapeDtypeStruct', 'jax.named_scope', 'jax.experimental.pallas'},
        prefixes=('jax.numpy.', 'jax.lax.', 'jax.experimental.pallas.', 'numpy.', 'math.', 'functools.'),
        denied_parts={'pure_callback', 'io_callback', 'callback', 'debug_callback', 'host_callback', 'ffi', 'extend',
                      'interpreters', 'core', 'save', 'savez', 'savez_compressed', 'load', 'loadtxt', 'savetxt',
                      'fromfile', 'tofile', 'memmap', 'genfromtxt', 'fromregex', 'lib', 'ctypeslib', 'testing',
                      'DataSource', 'f2py', 'distutils', 'os', 'sys', 'set_tpu_interpret_mode', 'InterpretParams'})


def write_result(path, status, correct, log, metrics=None, feedback=None, flags=None):
    # A failure's verdict is also the step's output: the fix prompt quotes the failing step's output.
    if status == 'error':
        print(log, file=sys.stderr)
    elif status != 'ok':
        print(log)
    with open(path, 'w') as f:
        json.dump({'status': status, 'correct': correct, 'log': log, 'metrics': metrics or {},
                   'feedback': feedback or [], 'flags': flags or []}, f, indent=1)


def read_text(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


# ---- static checks --------------------------------------------------------------------------------
def static_problems(text, parts=('hardening', 'names')):
    """(reasons to reject the candidate without running it, whether it is a syntax error)."""
    import py_guard
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return [f"line {e.lineno}: Python syntax error: {e.msg}"], True
    problems = []
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    if 'solution' not in defined:
        problems.append("no function solution: the candidate defines solution(*inputs) at module level")
    names = py_guard.aliases(tree)
    calls = {py_guard.dotted(n.func, names) if isinstance(n.func, ast.Attribute) else names.get(n.func.id)
             for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name))}
    if 'jax.experimental.pallas.pallas_call' not in calls:
        problems.append("no pallas_call: the work must be done by a Pallas kernel (pl.pallas_call)")
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == 'interpret':
            problems.append(f"line {node.value.lineno}: do not pass interpret=: the harness runs the kernel on the TPU, or "
                            "in Pallas' interpreter where there is none")
    problems += py_guard.check(tree, guard_policy(py_guard), parts)
    seen, unique = set(), []
    for p in problems:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique, False


def cmd_static(a):
    if a.guard_dir:
        sys.path.insert(0, a.guard_dir)
    problems, syntax = static_problems(read_text(a.candidate))
    if problems:
        write_result(a.result, 'compile_error' if syntax else 'rejected', False,
                     "static check: " + "; ".join(problems), feedback=problems)
        return 1
    return 0


# ---- the worker -----------------------------------------------------------------------------------
class WorkerError(Exception):
    def __init__(self, message, phase, trace):
        super().__init__(message)
        self.phase = phase
        self.trace = trace


class Worker:
    def __init__(self, fd, pid, timeout_s):
        self.mem = tc.open_channel(fd)
        self.pid = pid
        self.seq = 0
        self.timeout_s = timeout_s
        self.closed = False

    def alive(self):
        if not self.pid:
            return True
        try:
            os.kill(self.pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True

    def shutdown(self):
        """Asks a worker that is still answering to exit, so that it ends on its own rather than by a signal."""
        if self.closed or not self.alive() or tc.get_u32(self.mem, tc.OFF_DONE) != self.seq:
            return
        try:
            self.request({'cmd': 'exit'}, timeout_s=5)
        except (TimeoutError, WorkerError, tc.ChannelError):
            return

    def _error(self):
        answer, _ = tc.read_area(self.mem, tc.ANS_AREA)
        return WorkerError(str(answer.get('error', 'unknown error')), str(answer.get('phase', 'call')), str(answer.get('trace', '')))

    def request(self, header, arrays=(), timeout_s=None):
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        tc.write_area(self.mem, tc.REQ_AREA, header, arrays)
        tc.put_u32(self.mem, tc.OFF_REQ, self.seq)
        limit = timeout_s or self.timeout_s
        if not tc.wait_word(self.mem, tc.OFF_DONE, self.seq, limit, alive=self.alive):
            if not self.alive():
                raise WorkerError("the candidate's process exited", 'call', '')
            raise TimeoutError(f"the candidate did not answer within {limit:g} s (request '{header.get('cmd')}')")
        if tc.get_u32(self.mem, tc.OFF_STATUS) != 0:
            raise self._error()
        self.closed = header.get('cmd') == 'exit'
        if self.closed:
            deadline = time.monotonic() + 5
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.01)
        return tc.read_area(self.mem, tc.ANS_AREA)

    def timed(self, slot=0, fetch=False):
        """One call timed by this process's clock: the worker gets ready, runs on our word, and says done once the
        outputs are in the shared memory. Returns the time in ms, the answer's header and, with `fetch`, the
        outputs as they were when the clock stopped."""
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        seq = self.seq
        tc.write_area(self.mem, tc.REQ_AREA, {'cmd': 'timed', 'slot': slot})
        tc.put_u32(self.mem, tc.OFF_REQ, seq)
        if not tc.wait_word(self.mem, tc.OFF_READY, seq, self.timeout_s, alive=self.alive):
            if tc.get_u32(self.mem, tc.OFF_DONE) == seq:
                raise self._error()
            raise TimeoutError("the candidate did not get ready for a timed call")
        get, mem = tc.get_u32, self.mem
        t0 = time.perf_counter_ns()
        tc.put_u32(mem, tc.OFF_GO, seq)
        deadline = t0 + int(self.timeout_s * 1e9)
        while get(mem, tc.OFF_DONE) != seq:
            if time.perf_counter_ns() > deadline:
                raise TimeoutError(f"a timed call did not finish within {self.timeout_s:g} s")
        t1 = time.perf_counter_ns()
        if get(mem, tc.OFF_STATUS) != 0:
            raise self._error()
        header, arrays = tc.read_area(self.mem, tc.ANS_AREA) if fetch else (tc.read_header(self.mem, tc.ANS_AREA), [])
        return (t1 - t0) / 1e6, header, arrays


# ---- the problem ----------------------------------------------------------------------------------
def load_reference(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location('reference', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ('make_inputs', 'reference'):
        if not callable(getattr(module, name, None)):
            raise RuntimeError(f"{path}: the problem's reference defines no {name}()")
    return module


def host_outputs(value):
    import numpy as np
    values = list(value) if isinstance(value, (tuple, list)) else [value]
    return [np.asarray(v) for v in values]


def make_inputs(module, shape, rng):
    import numpy as np
    inputs = tuple(np.asarray(x) for x in module.make_inputs(dict(shape), rng))
    for x in inputs:
        tc.dtype_name(x)
    return inputs


def compare(ref, got, rtol, atol, what='output'):
    """None when `got` matches `ref` (numpy.allclose, NaN never equal), else why not."""
    import numpy as np
    if len(ref) != len(got):
        return f"{len(got)} {what}s, expected {len(ref)}"
    for i, (r, g) in enumerate(zip(ref, got)):
        if tuple(r.shape) != tuple(g.shape):
            return f"{what} {i}: shape {tuple(g.shape)}, expected {tuple(r.shape)}"
        rf, gf = r.astype(np.float64), g.astype(np.float64)
        if not np.allclose(gf, rf, rtol=rtol, atol=atol, equal_nan=False):
            diff = np.abs(gf - rf)
            bad = ~(diff <= atol + rtol * np.abs(rf))
            worst = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff))), r.shape) if r.size else ()
            nan = int(np.isnan(gf).sum() - np.isnan(rf).sum())
            return (f"{what} {i}: {int(bad.sum())} of {r.size} elements differ beyond rtol={rtol:g}, atol={atol:g}; "
                    f"worst at {list(map(int, worst))}: {gf[worst]:.6g}, expected {rf[worst]:.6g}"
                    + (f"; {nan} NaN" if nan > 0 else ""))
    return None


def program_outside_kernels(tree, found, kernels):
    """Walks the program the worker reported (a [name, [sub-programs]] tree, data): the primitives outside the
    kernels, and the number of kernel launches. Malformed data is a ChannelError."""
    if not isinstance(tree, list):
        raise tc.ChannelError("a malformed program")
    for eqn in tree:
        if not (isinstance(eqn, list) and len(eqn) == 2 and isinstance(eqn[0], str) and isinstance(eqn[1], list)):
            raise tc.ChannelError("a malformed program")
        name, subs = eqn
        if name == 'pallas_call':
            kernels[0] += 1
            continue
        found.add(name)
        for sub in subs:
            program_outside_kernels(sub, found, kernels)


def worker_failure(result, e):
    """Writes the result for a failure of the candidate's code in the worker: an import that fails is a
    compile error, a call that raises (the first one included: tracing, lowering) a crash. The traceback is
    in the log once; the step's output is the one line that says what happened."""
    status = 'compile_error' if e.phase == 'import' else 'crash'
    where = {'import': 'importing the candidate', 'first call': 'the first call (tracing and compiling the kernel)'}.get(e.phase, 'a call')
    summary = f"the candidate raised {e} during {where}"
    print(summary)
    with open(result, 'w') as f:
        json.dump({'status': status, 'correct': False, 'log': f"{summary}\n{e.trace}", 'metrics': {},
                   'feedback': [summary], 'flags': []}, f, indent=1)
    return 1


# ---- check ----------------------------------------------------------------------------------------
def cmd_check(a):
    worker = Worker(int(a.channels.split(',')[0]), int(a.worker_pids.split(',')[0]) if a.worker_pids else 0, a.timeout)
    try:
        return check(a, worker)
    finally:
        worker.shutdown()


def check(a, worker):
    import random
    import numpy as np
    rng = random.Random(a.seed)
    rtol, atol = tc.parse_tolerance(a.tolerance)
    module = load_reference(a.reference)
    shapes = tc.parse_shapes(a.shapes)
    if not shapes:
        write_result(a.result, 'error', False, "no shapes to check")
        return 2
    checked = []
    try:
        info, _ = worker.request({'cmd': 'init'}, timeout_s=max(a.timeout, 120))
        mode = ("Pallas' TPU interpreter on the CPU (jax " + str(info.get('jax')) + "): correctness only, no timing"
                if info.get('interpret') else f"{info.get('device_kind')} (Mosaic-compiled, jax {info.get('jax')})")
        first = None
        for shape in shapes:
            shape_text = ','.join(f"{k}={v}" for k, v in shape.items())
            for k in range(a.inputs_per_shape):
                inputs = make_inputs(module, shape, np.random.default_rng(rng.randrange(1 << 63)))
                expected = host_outputs(module.reference(*inputs))
                answer, arrays = worker.request({'cmd': 'check'}, inputs)
                n = int(answer.get('outputs', -1))
                if n < 0 or n > len(arrays):
                    raise WorkerError("a malformed answer", 'call', '')
                got, after = arrays[:n], arrays[n:]
                why = compare(expected, got, rtol, atol)
                if why:
                    write_result(a.result, 'incorrect', False, f"wrong result at {shape_text} (input set {k + 1}): {why}",
                                 feedback=[f"wrong result at {shape_text}: {why}"])
                    return 1
                changed = compare(list(inputs), after, 0.0, 0.0, 'input')
                if changed:
                    write_result(a.result, 'rejected', False, f"the kernel wrote its inputs at {shape_text}: {changed}",
                                 feedback=[f"the kernel modified an input: {changed}"], flags=["inputs modified"])
                    return 1
                if first is None:
                    first = inputs
                checked.append(shape_text)
        # The program that ran (traced once, compiled, and run for every call): outside its kernels, layout only.
        answer, _ = worker.request({'cmd': 'jaxpr'}, first)
        found, launches = set(), [0]
        program_outside_kernels(answer.get('program'), found, launches)
        kernels = launches[0]
        outside = found - CONTAINER_PRIMITIVES
        work = sorted(outside - LAYOUT_PRIMITIVES)
        if kernels == 0:
            write_result(a.result, 'rejected', False, "solution launches no Pallas kernel (no pallas_call in its jaxpr)",
                         feedback=["no pallas_call ran: do the work in a Pallas kernel"], flags=["no kernel"])
            return 1
        if work:
            write_result(a.result, 'rejected', False,
                         "work outside the kernels: solution runs " + ", ".join(work) + " outside pallas_call (only layout "
                         "is allowed there: " + ", ".join(sorted(LAYOUT_PRIMITIVES)) + ")",
                         feedback=["rejected: " + ", ".join(work) + " run outside pallas_call; move that work into the kernel"],
                         flags=["work outside the kernels"])
            return 1
        worker.request({'cmd': 'exit'}, timeout_s=10)
    except TimeoutError as e:
        write_result(a.result, 'timeout', False, str(e), feedback=[str(e)])
        return 1
    except WorkerError as e:
        return worker_failure(a.result, e)
    except tc.ChannelError as e:
        write_result(a.result, 'crash', False, f"the candidate's answer could not be read: {e}")
        return 1

    unique = list(dict.fromkeys(checked))
    feedback = [f"correct at {', '.join(unique)} ({a.inputs_per_shape} input set(s) each) on {mode}",
                f"{kernels} Pallas kernel launch(es) per call; outside the kernels: "
                + (", ".join(sorted(outside)) if outside else "no compute")]
    log = f"correct on {len(checked)} input sets (rtol={rtol:g}, atol={atol:g}) on {mode}"
    if a.out:
        with open(a.out, 'w') as f:
            json.dump({'backend': info.get('backend'), 'device_kind': info.get('device_kind'), 'interpret': info.get('interpret'),
                       'jax': info.get('jax'), 'feedback': feedback, 'log': log}, f)
    write_result(a.result, 'ok', True, log, feedback=feedback)
    return 0


# ---- bench ----------------------------------------------------------------------------------------
def cmd_bench(a):
    worker = Worker(int(a.channels.split(',')[0]), int(a.worker_pids.split(',')[0]) if a.worker_pids else 0, a.timeout)
    try:
        return bench(a, worker)
    finally:
        worker.shutdown()


def bench(a, worker):
    import random
    import numpy as np
    rng = random.Random(a.seed ^ 0x5EED)
    rtol, atol = tc.parse_tolerance(a.tolerance)
    module = load_reference(a.reference)
    shape = tc.parse_shapes(a.bench_shape)[0]
    try:
        info, _ = worker.request({'cmd': 'init'}, timeout_s=max(a.timeout, 120))
        if info.get('interpret'):
            write_result(a.result, 'error', False, f"bench needs a TPU, and JAX in the worker sees {info.get('backend')}: "
                         "timing an interpreted kernel would be meaningless")
            return 2
        # Every call on fresh inputs, rotated through a few buffers in the worker; the outputs of calls picked
        # from the seed are compared as they were when the clock stopped, and every call's must be the
        # reference's dtypes and shapes.
        slots = 4
        total = a.warmup + a.trials
        picks = set(rng.sample(range(a.warmup, total), min(a.checked_calls, a.trials))) | {total - 1}
        trials, expected_meta = [], None
        for i in range(total):
            inputs = make_inputs(module, shape, np.random.default_rng(rng.randrange(1 << 63)))
            worker.request({'cmd': 'stage', 'slot': i % slots}, inputs)
            ms, header, got = worker.timed(slot=i % slots, fetch=i in picks)
            meta = [(e.get('dtype'), e.get('shape')) for e in header.get('arrays', []) if isinstance(e, dict)]
            if expected_meta is None or i in picks:
                expected = host_outputs(module.reference(*inputs))
                expected_meta = [(str(x.dtype), list(x.shape)) for x in expected]
            if meta != expected_meta:
                write_result(a.result, 'incorrect', False, f"timed call {i + 1} returned {meta}, expected {expected_meta}",
                             flags=["timed output differs from the checked one"])
                return 1
            if i in picks:
                why = compare(expected, got, rtol, atol)
                if why:
                    write_result(a.result, 'incorrect', False, f"the output of timed call {i + 1} is wrong: {why}",
                                 flags=["timed output differs from the checked one"])
                    return 1
            if i >= a.warmup:
                trials.append(ms)
        worker.request({'cmd': 'exit'}, timeout_s=10)
    except TimeoutError as e:
        write_result(a.result, 'timeout', False, str(e))
        return 1
    except WorkerError as e:
        return worker_failure(a.result, e)
    report = tpu_output.format_report(trials)
    report = (f"# {a.trials} trials after {a.warmup} warm-ups at "
              + ','.join(f"{k}={v}" for k, v in shape.items()) + f" on {info.get('device_kind')}\n" + report)
    with open(a.out, 'w') as f:
        f.write(report)
    sys.stdout.write(report)
    return 0


# ---- report ---------------------------------------------------------------------------------------
def cmd_report(a):
    with open(a.check) as f:
        check = json.load(f)
    try:
        timing = tpu_output.parse_report(read_text(a.timing))
    except tpu_output.ReportError as e:
        write_result(a.result, 'error', False, f"{a.timing}: {e}")
        return 2
    trials = timing['trials_ms'] or [timing['latency_ms']]
    latency = {'median': timing['latency_ms'], 'mean': statistics.fmean(trials), 'min': min(trials), 'max': max(trials),
               'stddev': statistics.pstdev(trials) if len(trials) > 1 else 0.0, 'n': len(trials)}
    metrics = {'latency_ms': {k: (round(v, 6) if isinstance(v, float) else v) for k, v in latency.items()}}
    feedback = list(check.get('feedback', []))
    feedback.append(f"median {timing['latency_ms']:.4g} ms over {len(trials)} trials (min {latency['min']:.4g}, max "
                    f"{latency['max']:.4g}) on {check.get('device_kind')}")
    if timing['utilization_pct'] is not None:
        metrics['utilization_pct'] = timing['utilization_pct']
    write_result(a.result, 'ok', True, check.get('log', '') + f"; median {timing['latency_ms']:.4g} ms", metrics, feedback)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument('mode', choices=['static', 'check', 'bench', 'report'])
    p.add_argument('--candidate', default='')
    p.add_argument('--reference', default='')
    p.add_argument('--shapes', default='')
    p.add_argument('--bench-shape', default='')
    p.add_argument('--channels', default='3')
    p.add_argument('--worker-pids', default='')
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--tolerance', default='rtol=0.001,atol=0.001')
    p.add_argument('--inputs-per-shape', type=int, default=2)
    p.add_argument('--warmup', type=int, default=3)
    p.add_argument('--trials', type=int, default=10)
    p.add_argument('--timeout', type=float, default=120)
    p.add_argument('--venv', default='')
    p.add_argument('--guard-dir', default='')
    p.add_argument('--checked-calls', type=int, default=3)
    p.add_argument('--check', default='')
    p.add_argument('--timing', default='')
    p.add_argument('--out', default='')
    p.add_argument('--result', required=True)
    a = p.parse_args()
    if a.mode == 'static':
        return cmd_static(a)
    if a.mode == 'report':
        return cmd_report(a)
    try:
        return cmd_check(a) if a.mode == 'check' else cmd_bench(a)
    except Exception as e:  # noqa: BLE001 - a fault of the harness or the problem's reference, not the candidate
        import traceback
        write_result(a.result, 'error', False, f"the judge failed: {type(e).__name__}: {e}\n{traceback.format_exc()[-3000:]}")
        return 2


if __name__ == '__main__':
    sys.exit(main())
