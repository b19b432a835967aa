"""The candidate's side of a tpu evaluation (a candidate process: sandboxed, no network, writes nothing).

  tpu_worker.py serve CANDIDATE --channel-fd 3 [--venv DIR]
  tpu_worker.py run-exported --channel-fd 3 [--venv DIR]

serve imports the candidate and answers the judge's requests over the shared memory (autocomp_kit.channel):
it runs `solution(*inputs)` on the inputs the judge sends and sends the outputs back, and exports solution's
program for the TPU (jax.export, Mosaic-lowered: the program a TPU compiles, also where there is none) for the
judge to inspect. For a timed call it gets ready, waits for the judge's word, runs once and blocks until the
result is ready, and the judge's clock measures the time between the two words.

run-exported never imports the candidate: it runs the exported program the judge hands it (`load`), exactly
the artifact the judge inspected, with the same requests. On a TPU the judge's bench times this process, so
no Python of the candidate's runs where the verdict's figures are made.

Where JAX sees no TPU (a CPU-only jaxlib, or a machine without one), every pl.pallas_call of the
candidate runs in Pallas' TPU interpret mode (`pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())`): the kernel body
runs on the CPU with TPU semantics (block specs, grid order, VMEM scratch, DMA and semaphores;
uninitialized memory reads as NaN and out-of-bounds reads raise), which checks correctness but says
nothing about speed. The worker sets this itself, before the candidate is imported; candidates do not
pass `interpret=` (the static check refuses it). On a TPU the kernels compile with Mosaic as written.
"""
import argparse
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The kit sits beside the tools in the cache copy; run from the source tree, it is backends/common/python.
sys.path[:0] = [HERE] if os.path.isdir(os.path.join(HERE, 'autocomp_kit')) else [HERE, os.path.join(HERE, '..', '..', 'common', 'python')]
from autocomp_kit import channel, cli, isolation  # noqa: E402


def install_interpret_mode():
    """Makes every pallas_call the candidate makes run in Pallas' TPU interpreter (JAX's own switch)."""
    from jax.experimental.pallas import tpu as pltpu
    pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())


def load_candidate(path):
    spec = importlib.util.spec_from_file_location('candidate', path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules['candidate'] = module
    spec.loader.exec_module(module)
    solution = getattr(module, 'solution', None)
    if not callable(solution):
        raise RuntimeError("the candidate defines no function solution(*inputs)")
    return solution


def host_copy(x):
    import numpy as np
    return np.asarray(x)


def outputs_of(value):
    """The solution's result as host arrays; each must be exactly a jax.Array or numpy.ndarray."""
    import jax
    import numpy as np
    values = list(value) if isinstance(value, (tuple, list)) else [value]
    out = []
    for v in values:
        if not (isinstance(v, jax.Array) or type(v) is np.ndarray):
            raise TypeError(f"solution returned {type(v).__name__}, not an array or a tuple of arrays")
        out.append(np.asarray(v))
    return out


def exported_program(state, specs, set_phase):
    """solution's program for these input specs ([[shape], dtype] pairs), lowered for the TPU and serialized
    (jax.export): Pallas kernels as Mosaic custom calls, whatever is outside them as StableHLO. Lowered with the
    interpreter switched off, so on a CPU too it is the program a TPU would compile. Tracing runs the candidate's
    Python (phase 'call': what it raises is a crash, as in any call); lowering is the compiler's (phase 'export':
    a kernel Mosaic refuses is a compile error)."""
    import numpy as np
    args = [state['spec'](tuple(int(d) for d in shape), dtype) for shape, dtype in specs]
    jitted = state['jit'](state['solution'])
    with state['compiled_kernels']():
        set_phase('call')
        jitted.trace(*args)
        set_phase('export')
        exp = state['export'](jitted, platforms=['tpu'])(*args)
    return np.frombuffer(bytes(exp.serialize()), dtype=np.uint8)


def harness_functions(state, interpret):
    """The harness's own JAX entry points, taken before any code of the candidate's runs (it could rebind names)."""
    import contextlib

    import jax
    from jax import export
    from jax.experimental.pallas import tpu as pltpu
    state.update(jit=jax.jit, export=export.export, deserialize=export.deserialize,
                 spec=jax.ShapeDtypeStruct, device_put=jax.device_put, block=jax.block_until_ready,
                 compiled_kernels=(lambda: pltpu.force_tpu_interpret_mode(None)) if interpret else contextlib.nullcontext)


def serve(args):
    isolation.refuse_unsafe()
    # The harness's own functions, taken before the candidate's module runs and can rebind module names.
    plain_outputs, exported_of = outputs_of, exported_program
    server = channel.Server(args.channel_fd, channel.NUMPY)
    state = {'calls': 0, 'slots': {}}

    def handle(cmd, header, arrays):
        if cmd not in ('init', 'check', 'stage', 'export', 'timed'):
            return False
        if cmd == 'export':
            # Lowering can fail for the candidate's kernel (Mosaic refuses what the interpreter accepts): the phase
            # tells the judge it is a compile error, not a crash.
            server.answer(0, {'ok': True}, [exported_of(state, header.get('specs', []), lambda p: setattr(server, 'phase', p))])
            return True
        if cmd == 'init':
            server.phase = 'import'
            import jax
            backend = jax.default_backend()
            interpret = backend != 'tpu'
            if interpret:
                install_interpret_mode()
            harness_functions(state, interpret)
            state['solution'] = load_candidate(args.candidate)
            device = jax.devices()[0]
            server.answer(0, {'backend': backend, 'device_kind': getattr(device, 'device_kind', backend),
                              'interpret': interpret, 'jax': jax.__version__})
        elif cmd in ('check', 'stage'):
            import jax
            server.phase = 'first call' if state['calls'] == 0 else 'call'
            inputs = [jax.device_put(a) for a in arrays]
            if cmd == 'stage':
                state['slots'][int(header.get('slot', 0))] = inputs
                server.answer(0, {'ok': True})
            else:
                out = state['solution'](*inputs)
                jax.block_until_ready(out)
                state['calls'] += 1
                # The inputs as they are after the call: a kernel must not write them.
                outputs = plain_outputs(out)
                server.answer(0, {'outputs': len(outputs)}, outputs + [host_copy(x) for x in inputs])
        elif cmd == 'timed':
            # Run on the judge's word and hand the outputs over: the judge's clock stops when they are in
            # the shared memory, not when the call returns.
            solution, inputs = state['solution'], state['slots'][int(header.get('slot', 0))]
            server.timed(lambda: plain_outputs(solution(*inputs)))
        return True

    return server.serve(handle, idle_timeout_s=900)


def run_exported(args):
    """Serves the judge with the exported program it sends (`load`): check, stage and timed as serve does, with no
    code of the candidate's imported; the program runs on the TPU (compiled by XLA and Mosaic as exported)."""
    isolation.refuse_unsafe()
    plain_outputs = outputs_of
    server = channel.Server(args.channel_fd, channel.NUMPY)
    state = {'slots': {}, 'solution': None}

    def handle(cmd, header, arrays):
        if cmd not in ('load', 'check', 'stage', 'timed'):
            return False
        import jax
        if cmd == 'load':
            server.phase = 'import'
            from jax import export
            exp = export.deserialize(bytearray(arrays[0].tobytes()))
            state['solution'] = exp.call
            device = jax.devices()[0]
            server.answer(0, {'backend': jax.default_backend(), 'device_kind': getattr(device, 'device_kind', ''),
                              'platforms': list(exp.platforms), 'jax': jax.__version__})
            return True
        if state['solution'] is None:
            raise RuntimeError("no program loaded")
        if cmd == 'stage':
            state['slots'][int(header.get('slot', 0))] = [jax.device_put(a) for a in arrays]
            server.answer(0, {'ok': True})
        elif cmd == 'check':
            server.phase = 'call'
            inputs = [jax.device_put(a) for a in arrays]
            out = state['solution'](*inputs)
            jax.block_until_ready(out)
            outputs = plain_outputs(out)
            server.answer(0, {'outputs': len(outputs)}, outputs + [host_copy(x) for x in inputs])
        else:
            solution, inputs = state['solution'], state['slots'][int(header.get('slot', 0))]
            server.timed(lambda: plain_outputs(solution(*inputs)))
        return True

    return server.serve(handle, idle_timeout_s=900)


def main():
    p = argparse.ArgumentParser()
    cli.add_worker(p, ['serve', 'run-exported'])
    # The virtual environment's folder, named so that the sandbox shows it (its site-packages).
    p.add_argument('--venv', default='')
    args = p.parse_args()
    return run_exported(args) if args.mode == 'run-exported' else serve(args)


if __name__ == '__main__':
    sys.exit(main())
