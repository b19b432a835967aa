"""The candidate's side of a tpu evaluation (a candidate process: sandboxed, no network, writes nothing).

  tpu_worker.py serve CANDIDATE --channel-fd 3 [--venv DIR]

Imports the candidate and answers the judge's requests over the shared memory (autocomp_kit.channel):
it runs `solution(*inputs)` on the inputs the judge sends and sends the outputs back; for a timed call
it gets ready, waits for the judge's word, runs once and blocks until the result is ready, and the
judge's clock measures the time between the two words.

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


# Parameters that hold sub-programs of a primitive (pjit, cond, while, scan, custom_jvp, ...).
def sub_jaxprs(params):
    for value in params.values():
        items = value if isinstance(value, (tuple, list)) else [value]
        for item in items:
            if hasattr(item, 'eqns'):
                yield item
            elif hasattr(item, 'jaxpr') and hasattr(item.jaxpr, 'eqns'):
                yield item.jaxpr


def jaxpr_tree(jaxpr):
    """The program's primitives as data for the judge: [name, [sub-programs]] per equation; a pallas_call's
    kernel is not opened (what runs inside a kernel is the candidate's)."""
    out = []
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        subs = [] if name == 'pallas_call' else [jaxpr_tree(sub) for sub in sub_jaxprs(eqn.params)]
        out.append([name, subs])
    return out


def traced_program(state, inputs):
    """The primitives of solution's program for these inputs' signature (traced once per signature, with the
    harness's own jax.jit and tree walk, taken before the candidate's module ran)."""
    key = tuple((tuple(x.shape), str(x.dtype)) for x in inputs)
    if key not in state['programs']:
        state['programs'][key] = state['tree'](state['jit'](state['solution']).trace(*inputs).jaxpr.jaxpr)
    return state['programs'][key]


def serve(args):
    isolation.refuse_unsafe()
    # The harness's own functions, taken before the candidate's module runs and can rebind module names.
    plain_outputs, program_of = outputs_of, traced_program
    server = channel.Server(args.channel_fd, channel.NUMPY)
    state = {'calls': 0, 'programs': {}, 'slots': {}}

    def handle(cmd, header, arrays):
        if cmd not in ('init', 'check', 'stage', 'jaxpr', 'timed'):
            return False
        if cmd == 'init':
            server.phase = 'import'
            import jax
            backend = jax.default_backend()
            interpret = backend != 'tpu'
            if interpret:
                install_interpret_mode()
            # The harness's own functions, taken before the candidate's module runs and can rebind names.
            state.update(jit=jax.jit, tree=jaxpr_tree)
            state['solution'] = load_candidate(args.candidate)
            device = jax.devices()[0]
            server.answer(0, {'backend': backend, 'device_kind': getattr(device, 'device_kind', backend),
                              'interpret': interpret, 'jax': jax.__version__})
        elif cmd in ('check', 'stage', 'jaxpr'):
            import jax
            server.phase = 'first call' if state['calls'] == 0 else 'call'
            inputs = [jax.device_put(a) for a in arrays]
            if cmd == 'stage':
                state['slots'][int(header.get('slot', 0))] = inputs
                server.answer(0, {'ok': True})
            elif cmd == 'jaxpr':
                server.answer(0, {'program': program_of(state, inputs)})
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


def main():
    p = argparse.ArgumentParser()
    cli.add_worker(p, ['serve'])
    # The virtual environment's folder, named so that the sandbox shows it (its site-packages).
    p.add_argument('--venv', default='')
    args = p.parse_args()
    return serve(args)


if __name__ == '__main__':
    sys.exit(main())
