"""The judge of a tpu evaluation (trusted; a judge step: reads the candidate's file as data, never imports
or runs it, writes only its own directory).

  tpu_judge.py static --candidate FILE --result RESULT
      Before anything runs: Python syntax, a function `solution`, a pl.pallas_call, no try/except, no
      `interpret=` (the harness decides), imports from jax, numpy and a few pure standard modules only,
      no file, process, frame or host-callback access.
  tpu_judge.py check --candidate FILE --reference FILE --shapes S --bench-shape S --seed N --tolerance T ...
      Draws inputs from its secret seed (the problem's make_inputs(shape, rng)), computes reference(*inputs)
      itself on the CPU, has the worker run solution(*inputs) (on a TPU, or in Pallas' TPU interpreter
      without one), compares with allclose and checks that the inputs are unchanged. Then has the worker export
      solution's program for the TPU (jax.export: Pallas kernels as Mosaic custom calls) and inspects that
      artifact itself, in this process: outside the kernels, layout only; no other custom call (a host callback
      by any spelling is one); the signature the judge asked for. The artifact at the bench shape is kept in
      --export-out for bench.
  tpu_judge.py bench --bench-shape S --export FILE --warmup 3 --trials 10 ... --out TIMING
      On a TPU only, with the worker tpu_worker.py run-exported, which never imports the candidate: it runs the
      artifact check inspected (FILE). Two fresh input sets compared first; then warm-ups and timed calls on
      fresh inputs (4 rotating buffers), each timed by this process's clock from its word until the worker has
      copied the outputs into the shared memory; calls picked from the seed and the last are compared. A median below the memory floor (the call's bytes at the TPU's
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
import tpu_output  # noqa: E402
from autocomp_kit import channel, cli, draw, py_guard, results  # noqa: E402
from autocomp_kit.shapes import parse_shapes, shape_text  # noqa: E402
from autocomp_kit.channel import WorkerError  # noqa: E402
from autocomp_kit.compare import compare, parse_tolerance  # noqa: E402

read_text = results.read_text

# Outside its pallas_call kernels a solution may only lay data out: reshape, transpose, pad, change the element
# type, slice, broadcast and join. Everything else (arithmetic, reductions, dots, control flow, host callbacks by
# any spelling) is work outside the kernels. In the exported program (StableHLO, as a TPU compiles it) the list
# reads: reshape, transpose, pad, convert, slice, dynamic_slice, broadcast_in_dim, concatenate, reverse, iota and
# constants; the module's functions, calls and returns hold them (jit and custom_jvp have been inlined or made
# functions by then). Pallas kernels are `stablehlo.custom_call @tpu_custom_call` (their bodies are the
# candidate's Mosaic code, not opened); any other custom call (a host callback, an FFI call) is refused.
LAYOUT_OPS = {'stablehlo.reshape', 'stablehlo.transpose', 'stablehlo.pad', 'stablehlo.convert', 'stablehlo.slice',
              'stablehlo.dynamic_slice', 'stablehlo.broadcast_in_dim', 'stablehlo.concatenate', 'stablehlo.reverse',
              'stablehlo.iota', 'stablehlo.constant'}
STRUCTURE_OPS = {'builtin.module', 'func.func', 'func.call', 'func.return'}
KERNEL_CALL = 'tpu_custom_call'
# An exported program larger than this is refused before it is parsed (constants included, a real kernel's is
# kilobytes).
MAX_EXPORT_BYTES = 64 << 20


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


class BadProgram(Exception):
    """The exported program is not what the judge asked for (a malformed artifact, another signature)."""


def specs_of(arrays):
    return [[list(x.shape), str(x.dtype)] for x in arrays]


def inspect_export(data, inputs, outputs):
    """Reads the serialized jax.export artifact the worker sent (bytes: data, never trusted) in this process and
    walks its StableHLO: (the ops outside the kernels that are not layout, the custom calls that are not
    kernels, the number of kernel launches). The artifact must be for the TPU, one device, every safety check
    on, with exactly the inputs' and the reference outputs' shapes and dtypes (BadProgram otherwise)."""
    import numpy as np
    from jax import export
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir
    if len(data) > MAX_EXPORT_BYTES:
        raise BadProgram(f"the exported program is {len(data)} bytes (at most {MAX_EXPORT_BYTES})")
    try:
        exp = export.deserialize(bytearray(data))
    except Exception as e:  # noqa: BLE001 - whatever the parser says of untrusted bytes
        raise BadProgram(f"not a jax.export artifact ({type(e).__name__}: {str(e)[:200]})") from None
    if tuple(exp.platforms) != ('tpu',) or exp.nr_devices != 1 or exp.disabled_safety_checks:
        raise BadProgram(f"exported for {exp.platforms} on {exp.nr_devices} device(s) with checks disabled "
                         f"{exp.disabled_safety_checks}; expected the TPU, one device, every check")

    def signature(avals):
        return [[list(a.shape), str(np.dtype(a.dtype))] for a in avals]
    if signature(exp.in_avals) != specs_of(inputs) or signature(exp.out_avals) != specs_of(outputs):
        raise BadProgram(f"exported for inputs {signature(exp.in_avals)} -> {signature(exp.out_avals)}; expected "
                         f"{specs_of(inputs)} -> {specs_of(outputs)}")
    with mlir.make_ir_context() as context:
        module = ir.Module.parse(exp.mlir_module(), context=context)
        work, others, kernels = set(), set(), 0
        stack = [module.operation]
        while stack:
            op = stack.pop()
            name = op.name
            if name == 'stablehlo.custom_call':
                target = ir.StringAttr(op.attributes['call_target_name']).value
                if target == KERNEL_CALL:
                    kernels += 1
                else:
                    others.add(target)
                continue
            if name in LAYOUT_OPS:
                continue
            if name not in STRUCTURE_OPS:
                # Work; a reduction is named by what its body combines (reduce(maximum)), the body is its own.
                short = name.split('.', 1)[-1]
                if op.regions and short in ('reduce', 'reduce_window', 'scatter', 'select_and_scatter', 'sort'):
                    inner = sorted({child.operation.name.split('.', 1)[-1] for region in op.regions
                                    for block in region.blocks for child in block.operations} - {'return'})
                    short += '(' + ','.join(inner) + ')'
                work.add(short)
                continue
            for region in op.regions:
                for block in region.blocks:
                    stack.extend(child.operation for child in block.operations)
    return sorted(work), sorted(others), kernels


def export_from_worker(worker, inputs):
    """The worker's export of solution for these inputs' signature, as bytes."""
    answer, arrays = worker.request({'cmd': 'export', 'specs': specs_of(inputs)})
    if not answer.get('ok') or len(arrays) != 1 or str(arrays[0].dtype) != 'uint8':
        raise BadProgram("a malformed export answer")
    return arrays[0].tobytes()


def checked_call(worker, module, shape, rng, rtol, atol):
    """One call on fresh inputs drawn for `shape`, compared here with the reference: (the inputs, the reference's
    outputs, the inputs as the worker had them after the call, why the outputs are wrong or '')."""
    import numpy as np
    inputs = make_inputs(module, shape, np.random.default_rng(rng.subseed(63)))
    expected = host_outputs(module.reference(*inputs))
    answer, arrays = worker.request({'cmd': 'check'}, inputs)
    n = int(answer.get('outputs', -1))
    if n < 0 or n > len(arrays):
        raise WorkerError("a malformed answer", 'call', '')
    return inputs, expected, arrays[n:], compare(expected, arrays[:n], rtol, atol)


def worker_failure(result, e):
    """Writes the result for a failure of the candidate's code in the worker: an import that fails is a
    compile error, a call that raises (the first one included: tracing, lowering) a crash. The traceback is
    in the log once; the step's output is the one line that says what happened."""
    if e.phase == 'export' and 'callback' in e.trace:
        # Lowering for the TPU failed inside JAX's host-callback machinery: the candidate calls back to the host.
        summary = f"solution calls back to the host (a host callback), which a TPU program cannot hold: {e}"
        print(summary)
        results.write_result(result, 'rejected', False, f"{summary}\n{e.trace}", feedback=[summary],
                             flags=["work outside the kernels"])
        return 1
    status = 'compile_error' if e.phase in ('import', 'export') else 'crash'
    where = {'import': 'importing the candidate', 'first call': 'the first call (tracing and compiling the kernel)',
             'export': "lowering solution for the TPU (jax.export with Mosaic: what a TPU compiles, which Pallas' "
                       "interpreter does not check)"}.get(e.phase, 'a call')
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
    shapes = parse_shapes(a.shapes)
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
            where = shape_text(shape)
            for k in range(a.inputs_per_shape):
                inputs, expected, after, why = checked_call(worker, module, shape, rng, rtol, atol)
                if why:
                    write_result(a.result, 'incorrect', False, f"wrong result at {where} (input set {k + 1}): {why}",
                                 feedback=[f"wrong result at {where}: {why}"])
                    return 1
                changed = compare(list(inputs), after, 0.0, 0.0, 'input')
                if changed:
                    write_result(a.result, 'rejected', False, f"the kernel wrote its inputs at {where}: {changed}",
                                 feedback=[f"the kernel modified an input: {changed}"], flags=["inputs modified"])
                    return 1
                if first is None:
                    first, first_expected = inputs, expected
                checked.append(where)
        # The program a TPU runs: exported by the worker for the TPU, read and walked here. What the worker says
        # about itself is data; on a TPU the bench runs exactly this artifact in a process that never imported
        # the candidate, so a program that differs from what the calls above ran gains nothing.
        work, others, kernels = inspect_export(export_from_worker(worker, first), first, first_expected)
        if others:
            write_result(a.result, 'rejected', False,
                         "solution calls " + ", ".join(others) + " outside its Pallas kernels (a host callback or a "
                         "foreign function: only Pallas kernels may run code)",
                         feedback=["rejected: custom calls " + ", ".join(others) + "; do the work in a Pallas kernel"],
                         flags=["work outside the kernels"])
            return 1
        if kernels == 0:
            write_result(a.result, 'rejected', False, "solution launches no Pallas kernel (no Mosaic kernel in its "
                         "exported TPU program)",
                         feedback=["no pallas_call ran: do the work in a Pallas kernel"], flags=["no kernel"])
            return 1
        if work:
            write_result(a.result, 'rejected', False,
                         "work outside the kernels: solution runs " + ", ".join(work) + " outside pallas_call (only layout "
                         "is allowed there: " + ", ".join(sorted(o.split('.', 1)[1] for o in LAYOUT_OPS)) + ")",
                         feedback=["rejected: " + ", ".join(work) + " run outside pallas_call; move that work into the kernel"],
                         flags=["work outside the kernels"])
            return 1
        if a.export_out and a.bench_shape:
            # The artifact the bench step runs on a TPU, at the bench shape, inspected the same way.
            shape = parse_shapes(a.bench_shape)[0]
            bench_inputs = make_inputs(module, shape, np.random.default_rng(rng.subseed(63)))
            data = export_from_worker(worker, bench_inputs)
            bwork, bothers, bkernels = inspect_export(data, bench_inputs, host_outputs(module.reference(*bench_inputs)))
            if bwork or bothers or bkernels == 0:
                write_result(a.result, 'rejected', False, "at the bench shape solution's program differs: "
                             f"{bkernels} kernel(s), outside them {', '.join(bwork + bothers) or 'nothing'}",
                             flags=["work outside the kernels"])
                return 1
            with open(a.export_out, 'wb') as f:
                f.write(data)
        worker.request({'cmd': 'exit'}, timeout_s=10)
    except TimeoutError as e:
        write_result(a.result, 'timeout', False, str(e), feedback=[str(e)])
        return 1
    except WorkerError as e:
        return worker_failure(a.result, e)
    except channel.ChannelError as e:
        write_result(a.result, 'crash', False, f"the candidate's answer could not be read: {e}")
        return 1
    except BadProgram as e:
        write_result(a.result, 'rejected', False, f"the program the worker exported: {e}", flags=["bad exported program"])
        return 1

    unique = list(dict.fromkeys(checked))
    feedback = [f"correct at {', '.join(unique)} ({a.inputs_per_shape} input set(s) each) on {mode}",
                f"{kernels} Pallas kernel launch(es) per call in the exported TPU program; outside the kernels: "
                "layout only"]
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
    shape = parse_shapes(a.bench_shape)[0]
    flags = []
    try:
        import numpy as np
        # The artifact check inspected, run by a worker that never imported the candidate (run-exported).
        data = np.frombuffer(open(a.export, 'rb').read(), dtype=np.uint8)
        info, _ = worker.request({'cmd': 'load'}, [data], timeout_s=max(a.timeout, 120))
        if info.get('backend') != 'tpu':
            write_result(a.result, 'error', False, f"bench needs a TPU, and JAX in the worker sees {info.get('backend')}: "
                         "timing anywhere else would be meaningless")
            return 2
        # Two fresh input sets compared whole before any timing: the exported program must be right on its own.
        for k in range(2):
            why = checked_call(worker, module, shape, rng, rtol, atol)[3]
            if why:
                raise Wrong(f"the exported program's output is wrong (input set {k + 1}): {why}")
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
    # check: where to keep the exported program at the bench shape; bench: the program to run.
    p.add_argument('--export-out', default='')
    p.add_argument('--export', default='')
    a = p.parse_args()
    if a.mode == 'static':
        return cmd_static(a)
    if a.mode == 'report':
        return cmd_report(a)
    return cli.run(lambda args: with_worker(args, check if args.mode == 'check' else bench), a)


if __name__ == '__main__':
    sys.exit(main())
