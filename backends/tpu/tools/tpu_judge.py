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
      On a TPU only: warm-ups, then timed calls on fresh inputs (4 rotating buffers), each timed by this
      process's clock from its word until the worker has copied the outputs into the shared memory; calls picked
      from the seed and the last are compared. A median below the memory floor (the call's bytes at the TPU's
      peak HBM bandwidth) is timed again with every output compared before it can stand. Writes the report
      (tpu_output.py's format: `Latency: X ms`, the median; `# flag:` lines for a figure that was re-timed).
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

os.environ['JAX_PLATFORMS'] = 'cpu'
HERE = os.path.dirname(os.path.abspath(__file__))
# The kit sits beside the tools in the cache copy; run from the source tree, it is backends/common/python.
sys.path[:0] = [HERE] if os.path.isdir(os.path.join(HERE, 'autocomp_kit')) else [HERE, os.path.join(HERE, '..', '..', 'common', 'python')]
import tpu_common as tc  # noqa: E402
import tpu_output  # noqa: E402
from autocomp_kit import channel, cli, draw, py_guard, results  # noqa: E402
from autocomp_kit.channel import WorkerError  # noqa: E402
from autocomp_kit.compare import compare, parse_tolerance  # noqa: E402

read_text = results.read_text

# Outside its pallas_call kernels a solution may only lay data out: reshape, transpose, pad, change the element
# type, slice, broadcast and join. Containers (jit, custom_jvp, ...) are opened and their contents held to the
# same list. Everything else (arithmetic, reductions, dots, host callbacks by any spelling) is work outside
# the kernels.
LAYOUT_PRIMITIVES = {'reshape', 'transpose', 'pad', 'convert_element_type', 'slice', 'dynamic_slice', 'squeeze',
                     'expand_dims', 'broadcast_in_dim', 'concatenate', 'copy', 'copy_p', 'rev', 'iota'}
CONTAINER_PRIMITIVES = {'pjit', 'jit', 'closed_call', 'core_call', 'custom_jvp_call', 'custom_vjp_call',
                        'custom_vjp_call_jaxpr', 'remat', 'checkpoint'}


def guard_policy():
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
    results.write_result(path, status, correct, log, metrics, feedback, flags, echo='failure')


# ---- static checks --------------------------------------------------------------------------------
def static_problems(text, parts=('hardening', 'names')):
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
    names = py_guard.aliases(tree)
    calls = {py_guard.dotted(n.func, names) if isinstance(n.func, ast.Attribute) else names.get(n.func.id)
             for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name))}
    if 'jax.experimental.pallas.pallas_call' not in calls:
        problems.append("no pallas_call: the work must be done by a Pallas kernel (pl.pallas_call)")
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == 'interpret':
            problems.append(f"line {node.value.lineno}: do not pass interpret=: the harness runs the kernel on the TPU, or "
                            "in Pallas' interpreter where there is none")
    problems += py_guard.check(tree, guard_policy(), parts)
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
def with_worker(a, step):
    """step(a, worker) with the judge's handle on the candidate's worker (the kit's channel, NumPy arrays), which is
    asked to exit at the end if it still answers."""
    worker = channel.Worker(cli.first_int(a.channels), cli.first_int(a.worker_pids), a.timeout, channel.NUMPY)
    try:
        return step(a, worker)
    finally:
        worker.shutdown()


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
        if str(x.dtype) not in channel.DTYPES:
            raise channel.ChannelError(f"the problem's inputs include {x.dtype}, which cannot be exchanged")
    return inputs


def program_outside_kernels(tree, found, kernels):
    """Walks the program the worker reported (a [name, [sub-programs]] tree, data): the primitives outside the
    kernels, and the number of kernel launches. Malformed data is a ChannelError."""
    if not isinstance(tree, list):
        raise channel.ChannelError("a malformed program")
    for eqn in tree:
        if not (isinstance(eqn, list) and len(eqn) == 2 and isinstance(eqn[0], str) and isinstance(eqn[1], list)):
            raise channel.ChannelError("a malformed program")
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
    results.write_result(result, status, False, f"{summary}\n{e.trace}", feedback=[summary])
    return 1


# ---- check ----------------------------------------------------------------------------------------
def check(a, worker):
    import numpy as np
    rng = draw.Draw(a.seed)
    rtol, atol = parse_tolerance(a.tolerance)
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
                inputs = make_inputs(module, shape, np.random.default_rng(rng.subseed(63)))
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
    except channel.ChannelError as e:
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
# Peak HBM bandwidth in GB/s by TPU generation (Google's published figures), for the memory floor: no call can
# take less time than reading its inputs and writing its outputs once at this rate. An unknown kind gets the
# highest (the lowest floor).
HBM_GBPS = (('v6', 1640), ('v5p', 2765), ('v5', 819), ('v4', 1200), ('v3', 900), ('v2', 700))


def memory_floor_ms(device_kind, nbytes):
    kind = (device_kind or '').lower().replace(' ', '')
    gbps = next((g for k, g in HBM_GBPS if k in kind), max(g for _, g in HBM_GBPS))
    return nbytes / (gbps * 1e9) * 1e3


class Wrong(Exception):
    pass


def timed_calls(worker, module, shape, rng, count, picks, rtol, atol):
    """`count` timed calls, each on fresh inputs staged into one of the worker's rotating buffers; every call's
    outputs must have the reference's dtypes and shapes, and those of the calls in `picks` are compared as they
    were when the clock stopped (Wrong otherwise). Returns (the times in ms, the bytes one call moves)."""
    import numpy as np
    times, expected_meta, nbytes = [], None, 0
    for i in range(count):
        inputs = make_inputs(module, shape, np.random.default_rng(rng.subseed(63)))
        worker.request({'cmd': 'stage', 'slot': draw.slot(i)}, inputs)
        ms, header, got = worker.timed({'slot': draw.slot(i)}, fetch=i in picks)
        meta = channel.metadata(header)
        if expected_meta is None or i in picks:
            expected = host_outputs(module.reference(*inputs))
            expected_meta = [(str(x.dtype), list(x.shape)) for x in expected]
            nbytes = sum(x.nbytes for x in inputs) + sum(x.nbytes for x in expected)
        if meta != expected_meta:
            raise Wrong(f"timed call {i + 1} returned {meta}, expected {expected_meta}")
        if i in picks:
            why = compare(expected, got, rtol, atol)
            if why:
                raise Wrong(f"the output of timed call {i + 1} is wrong: {why}")
        times.append(ms)
    return times, nbytes


def bench(a, worker):
    rng = draw.Draw(a.seed, stream=0x5E)
    rtol, atol = parse_tolerance(a.tolerance)
    module = load_reference(a.reference)
    shape = tc.parse_shapes(a.bench_shape)[0]
    flags = []
    try:
        info, _ = worker.request({'cmd': 'init'}, timeout_s=max(a.timeout, 120))
        if info.get('interpret'):
            write_result(a.result, 'error', False, f"bench needs a TPU, and JAX in the worker sees {info.get('backend')}: "
                         "timing an interpreted kernel would be meaningless")
            return 2
        # Every call on fresh inputs, rotated through a few buffers in the worker; the outputs of calls picked
        # from the seed are compared as they were when the clock stopped.
        total = a.warmup + a.trials
        times, nbytes = timed_calls(worker, module, shape, rng, total, rng.picks(a.warmup, total, a.checked_calls), rtol, atol)
        trials = times[a.warmup:]
        median = statistics.median(trials)
        floor = memory_floor_ms(info.get('device_kind'), nbytes)
        if median < floor:
            # Faster than its bytes can move: timed again before it can rank, every output compared.
            strict_calls = max(10, a.trials)
            again, _ = timed_calls(worker, module, shape, rng, strict_calls, set(range(strict_calls)), rtol, atol)
            strict = statistics.median(again)
            if strict > 2 * median:
                write_result(a.result, 'rejected', False,
                             f"a median of {median:.4g} ms, below the memory floor of {floor:.4g} ms ({nbytes} bytes at "
                             f"{info.get('device_kind')}'s HBM bandwidth), did not hold when timed again with every output "
                             f"checked ({strict:.4g} ms)", flags=["suspicious figure did not hold"])
                return 1
            flags.append(f"suspicious: median {median:.4g} ms is below the memory floor of {floor:.4g} ms; timed again with "
                         f"every output checked it held at {strict:.4g} ms, so it stands")
        worker.request({'cmd': 'exit'}, timeout_s=10)
    except Wrong as e:
        write_result(a.result, 'incorrect', False, str(e), flags=["timed output differs from the checked one"])
        return 1
    except TimeoutError as e:
        write_result(a.result, 'timeout', False, str(e))
        return 1
    except WorkerError as e:
        return worker_failure(a.result, e)
    report = tpu_output.format_report(trials)
    report = (f"# {a.trials} trials after {a.warmup} warm-ups at "
              + ','.join(f"{k}={v}" for k, v in shape.items()) + f" on {info.get('device_kind')}\n"
              + ''.join(f"# flag: {f}\n" for f in flags) + report)
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
    # The bench step's flags (a suspicious figure that held), as its report's "# flag:" lines.
    flags = [line[len('# flag:'):].strip() for line in read_text(a.timing).splitlines() if line.startswith('# flag:')]
    feedback.append(f"median {timing['latency_ms']:.4g} ms over {len(trials)} trials (min {latency['min']:.4g}, max "
                    f"{latency['max']:.4g}) on {check.get('device_kind')}")
    if timing['utilization_pct'] is not None:
        metrics['utilization_pct'] = timing['utilization_pct']
    write_result(a.result, 'ok', True, check.get('log', '') + f"; median {timing['latency_ms']:.4g} ms", metrics, feedback, flags)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument('mode', choices=['static', 'check', 'bench', 'report'])
    cli.add_common(p, tolerance='rtol=0.001,atol=0.001', trials=10, timeout=120)
    p.add_argument('--shapes', default='')
    p.add_argument('--bench-shape', default='')
    p.add_argument('--inputs-per-shape', type=int, default=2)
    p.add_argument('--venv', default='')
    p.add_argument('--check', default='')
    p.add_argument('--timing', default='')
    p.add_argument('--out', default='')
    a = p.parse_args()
    if a.mode == 'static':
        return cmd_static(a)
    if a.mode == 'report':
        return cmd_report(a)
    return cli.run(lambda args: with_worker(args, check if args.mode == 'check' else bench), a)


if __name__ == '__main__':
    sys.exit(main())
