#!/usr/bin/env python3
"""The trainium target's candidate-side process: it imports the candidate's NKI module (and nothing
of the judge's) and either compiles it to a NEFF or runs it for the judge.

    nki_worker.py compile --kernel FILE --entry NAME --problem-dir DIR --shape S --out FILE.neff
    nki_worker.py serve   --kernel FILE --entry NAME --channel-fd 3

`compile` traces the kernel with inputs of the problem's shapes and dtypes (the problem's
reference.py says which) through `nki.baremetal(..., save_neff_name=...)`, which runs neuronx-cc and
writes the NEFF before executing it; a failed execution after the NEFF exists (no NeuronCore here,
or a busy one) is not a compile error. `serve` answers the judge's requests over the shared memory:
run the kernel on the judge's inputs and send the outputs back, or benchmark it with
`nki.benchmark(warmup=2, iters=10)` and send the `Latency: X ms (P99)` line back.
"""
import argparse
import contextlib
import importlib.util
import io
import os
import sys
import traceback

# No __pycache__ beside the tools: the target's files are hashed into {backend_hash}.
sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
# The kit sits beside the tools in the cache copy; run from the source tree, it is backends/common/python.
sys.path[:0] = [HERE] if os.path.isdir(os.path.join(HERE, 'autocomp_kit')) else [HERE, os.path.join(HERE, '..', '..', 'common', 'python')]
import nki_channel  # noqa: E402
from autocomp_kit import isolation  # noqa: E402


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_function(path, entry):
    fn = getattr(load_module(path, "candidate"), entry, None)
    if fn is None:
        raise SystemExit(f"{path}: no '{entry}'")
    return getattr(fn, "func", fn)  # the undecorated function, to wrap with baremetal/benchmark


def parse_shape(text):
    return {k: int(v) for k, v in (item.split("=") for item in text.split(","))}


def cmd_compile(a):
    import numpy as np
    from neuronxcc import nki
    problem = load_module(os.path.join(a.problem_dir, "reference.py"), "problem_reference")
    inputs = problem.make_inputs(parse_shape(a.shape), np.random.default_rng(0))
    fn = kernel_function(a.kernel, a.entry)
    if os.path.exists(a.out):
        os.remove(a.out)
    try:
        nki.baremetal(fn, save_neff_name=a.out)(*inputs)
    except Exception:  # noqa: BLE001 - reported below; only a missing NEFF is a compile error
        if not os.path.exists(a.out):
            traceback.print_exc()
            return 1
        print("compiled; the execution that followed failed (no free NeuronCore here): not needed for the NEFF")
    if not os.path.exists(a.out):
        print(f"neuronx-cc wrote no NEFF to {a.out}", file=sys.stderr)
        return 1
    print(f"NEFF: {a.out} ({os.path.getsize(a.out)} bytes)")
    return 0


def cmd_serve(a):
    # Not in an interpreter a candidate's compile step could have prepared (user site, a writable import path).
    isolation.refuse_unsafe()
    import numpy as np
    from neuronxcc import nki
    fn = kernel_function(a.kernel, a.entry)
    runner = nki.baremetal(fn)
    mem = nki_channel.open_channel(a.channel_fd)

    def handle(op, payload):
        try:
            inputs = nki_channel.unpack_arrays(payload)
            if op == nki_channel.OP_RUN:
                out = runner(*inputs)
                outs = list(out) if isinstance(out, (tuple, list)) else [out]
                return nki_channel.STATUS_OK, nki_channel.pack_arrays([np.asarray(o) for o in outs])
            if op == nki_channel.OP_BENCHMARK:
                bench = nki.benchmark(warmup=2, iters=10)(fn)
                with contextlib.redirect_stdout(io.StringIO()):
                    bench(*inputs)
                p99_us = bench.benchmark_result.nc_latency.get_latency_percentile(99)
                return nki_channel.STATUS_OK, f"Latency: {p99_us / 1000.0:.3f} ms (P99)\n".encode()
            return nki_channel.STATUS_ERROR, f"unknown operation {op}".encode()
        except Exception:  # noqa: BLE001 - the judge gets the traceback as the candidate's failure
            return nki_channel.STATUS_ERROR, traceback.format_exc()[-8000:].encode()

    nki_channel.serve(mem, handle)
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("compile")
    for name in ("--kernel", "--problem-dir", "--shape", "--out"):
        s.add_argument(name, required=True)
    s.add_argument("--entry", default="solution")
    s = sub.add_parser("serve")
    s.add_argument("--kernel", required=True)
    s.add_argument("--entry", default="solution")
    s.add_argument("--channel-fd", type=int, default=3)
    a = p.parse_args()
    return cmd_compile(a) if a.cmd == "compile" else cmd_serve(a)


if __name__ == "__main__":
    sys.exit(main())
