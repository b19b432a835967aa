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

ALLOWED_IMPORTS = {'jax', 'numpy', 'functools', 'math', 'typing', 'itertools', 'operator', 'dataclasses', 'enum',
                   'collections', '__future__'}
FORBIDDEN_CALLS = {'open', 'exec', 'eval', 'compile', '__import__', 'globals', 'locals', 'vars', 'breakpoint', 'input',
                   'setattr', 'delattr'}
FORBIDDEN_ATTRIBUTES = {'__globals__', '__dict__', '__code__', '__builtins__', '__subclasses__', '__class__', '_getframe',
                        'f_back', 'f_globals', 'f_locals', 'gi_frame', 'pure_callback', 'io_callback', 'callback',
                        'stdout', 'stderr', 'environ', 'system'}
# Primitives that move, view or make data: a candidate may run them around its kernels freely.
TRIVIAL_PRIMITIVES = {'reshape', 'broadcast_in_dim', 'convert_element_type', 'transpose', 'squeeze', 'expand_dims',
                      'slice', 'dynamic_slice', 'dynamic_update_slice', 'concatenate', 'pad', 'copy', 'copy_p', 'pjit',
                      'jit', 'closed_call', 'custom_jvp_call', 'custom_vjp_call', 'iota', 'select_n', 'gather',
                      'device_put', 'bitcast_convert_type', 'rev', 'stop_gradient', 'squeeze', 'split'}


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
def static_problems(text):
    """(reasons to reject the candidate without running it, whether it is a syntax error)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return [f"line {e.lineno}: Python syntax error: {e.msg}"], True
    problems = []
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    if 'solution' not in defined:
        problems.append("no function solution: the candidate defines solution(*inputs) at module level")
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    if 'pallas_call' not in names and 'pallas_call' not in imported:
        problems.append("no pallas_call: the work must be done by a Pallas kernel (pl.pallas_call)")
    for node in ast.walk(tree):
        line = getattr(node, 'lineno', 0)
        if isinstance(node, ast.Try) or type(node).__name__ == 'TryStar':
            problems.append(f"line {line}: try/except is not allowed (it is how a kernel hides a failure or falls back "
                            "to plain JAX)")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split('.')[0] not in ALLOWED_IMPORTS:
                    problems.append(f"line {line}: import {a.name} is not allowed (only {', '.join(sorted(ALLOWED_IMPORTS - {'__future__'}))})")
        elif isinstance(node, ast.ImportFrom):
            if node.level or (node.module or '').split('.')[0] not in ALLOWED_IMPORTS:
                problems.append(f"line {line}: from {'.' * node.level}{node.module or ''} import is not allowed (only "
                                f"{', '.join(sorted(ALLOWED_IMPORTS - {'__future__'}))})")
        elif isinstance(node, ast.keyword) and node.arg == 'interpret':
            problems.append(f"line {node.value.lineno}: do not pass interpret=: the harness runs the kernel on the TPU, or "
                            "in Pallas' interpreter where there is none")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            problems.append(f"line {line}: {node.func.id}() is not allowed in a kernel file")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            problems.append(f"line {line}: .{node.attr} is not allowed in a kernel file")
        elif isinstance(node, ast.Global):
            problems.append(f"line {line}: global state is not allowed (outputs may not be cached across calls)")
    seen, unique = set(), []
    for p in problems:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique, False


def cmd_static(a):
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

    def timed(self):
        """One call timed by this process's clock: the worker gets ready, then runs on our word."""
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        seq = self.seq
        tc.write_area(self.mem, tc.REQ_AREA, {'cmd': 'timed'})
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
        return (t1 - t0) / 1e6


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


def compute_primitives(found):
    return {p for p in found if p not in TRIVIAL_PRIMITIVES}


def reference_primitives(module, inputs):
    import jax
    import jax.numpy as jnp
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tpu_worker import primitives_outside_kernels
    found, kernels = set(), [0]
    primitives_outside_kernels(jax.make_jaxpr(module.reference)(*[jnp.asarray(x) for x in inputs]).jaxpr, found, kernels)
    return compute_primitives(found)


def worker_failure(result, e, first_phase_status='compile_error'):
    """Writes the result for a failure of the candidate's code in the worker."""
    compile_time = e.phase in ('import', 'first call')
    status = first_phase_status if compile_time else 'crash'
    where = {'import': 'importing the candidate', 'first call': 'the first call (tracing and compiling the kernel)'}.get(e.phase, 'a call')
    write_result(result, status, False, f"the candidate raised {e} during {where}\n{e.trace}",
                 feedback=[f"the candidate raised {e} during {where}"])
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
        # A fallback: every compute primitive of the reference runs outside the candidate's kernels.
        answer, _ = worker.request({'cmd': 'jaxpr'}, first)
        outside = compute_primitives(set(answer.get('primitives', [])))
        kernels = int(answer.get('kernels', 0))
        ref_prims = reference_primitives(module, first)
        if kernels == 0:
            write_result(a.result, 'rejected', False, "solution launches no Pallas kernel (no pallas_call in its jaxpr)",
                         feedback=["no pallas_call ran: do the work in a Pallas kernel"], flags=["no kernel"])
            return 1
        if ref_prims and ref_prims <= outside:
            write_result(a.result, 'rejected', False,
                         "fallback: solution runs every compute primitive of the reference (" + ", ".join(sorted(ref_prims))
                         + ") outside its Pallas kernels", feedback=["rejected as a fallback to plain JAX: "
                         + ", ".join(sorted(ref_prims)) + " run outside pallas_call; move that work into the kernel"],
                         flags=["fallback: the reference's primitives outside the kernels"])
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
        inputs = make_inputs(module, shape, np.random.default_rng(rng.randrange(1 << 63)))
        expected = host_outputs(module.reference(*inputs))
        worker.request({'cmd': 'load'}, inputs)
        for _ in range(a.warmup):
            worker.timed()
        trials = [worker.timed() for _ in range(a.trials)]
        _, last = worker.request({'cmd': 'fetch'})
        why = compare(expected, last, rtol, atol)
        if why:
            write_result(a.result, 'incorrect', False, f"the output of the last timed call is wrong: {why}",
                         flags=["timed output differs from the checked one"])
            return 1
        worker.request({'cmd': 'exit'}, timeout_s=10)
    except TimeoutError as e:
        write_result(a.result, 'timeout', False, str(e))
        return 1
    except WorkerError as e:
        return worker_failure(a.result, e, first_phase_status='crash')
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
