"""Reads KernelBench problem files and picks each one's size scale for a device.

  kb_import.py FILE... --device cpu [--scale F] [--budget-ms 50] [--memory-mb 1024]

For each file prints one JSON line: {"file", "ok", "scale", "forward_ms", "input_mb", "param_mb", "sizes",
"dtype", "error"}. Without --scale on device cpu, the scale halves from 1 until the inputs and weights
fit in a sixteenth of the memory budget (room for activations and copies) (measured on the meta device, without allocating) and one
reference forward pass takes at most the time budget (measured). KernelBench files at GPU sizes (inputs
of several GiB) are the normal case.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kb_common as kb  # noqa: E402

FACTORIES = ['randn', 'rand', 'randint', 'zeros', 'ones', 'empty', 'full', 'randn_like', 'rand_like', 'arange',
             'tensor', 'normal', 'linspace', 'eye', 'randperm']


class MetaFactories:
    """Within this block torch's factory functions make tensors on the meta device: shapes without memory."""

    def __enter__(self):
        import torch
        self.saved = {}
        for name in FACTORIES:
            real = getattr(torch, name, None)
            if real is None:
                continue
            self.saved[name] = real

            def make(real=real):
                def f(*args, **kwargs):
                    kwargs['device'] = 'meta'
                    return real(*args, **kwargs)
                return f
            setattr(torch, name, make())
        return self

    def __exit__(self, *exc):
        import torch
        for name, real in self.saved.items():
            setattr(torch, name, real)


def nbytes(values):
    import torch
    total = 0
    for v in values:
        if isinstance(v, torch.Tensor):
            total += v.numel() * v.element_size()
    return total


def estimate(module, originals, scale):
    """(input bytes, parameter bytes or None) at `scale`, without allocating."""
    import torch
    kb.apply_scale(module, scale, originals)
    with MetaFactories():
        inputs = module.get_inputs()
    in_bytes = nbytes(inputs)
    try:
        with torch.device('meta') if hasattr(torch, 'device') and hasattr(torch.device, '__enter__') else MetaFactories():
            model = module.Model(*module.get_init_inputs())
        params = sum(p.numel() * p.element_size() for p in model.parameters()) if isinstance(model, torch.nn.Module) else 0
    except Exception:  # noqa: BLE001 - some constructors need real tensors; measured later then
        params = None
    return in_bytes, params


def measure(module, originals, scale, device, runs=3):
    import torch
    kb.apply_scale(module, scale, originals)
    kb.set_seed(42)
    model = module.Model(*module.get_init_inputs())
    if isinstance(model, torch.nn.Module):
        model = model.to(device)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
    params = sum(p.numel() * p.element_size() for p in model.parameters()) if isinstance(model, torch.nn.Module) else 0
    times = []
    with torch.no_grad():
        out = model(*inputs)
        for _ in range(runs):
            t0 = time.perf_counter()
            out = model(*inputs)
            if device == 'cuda':
                torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1000)
    outs = [out] if isinstance(out, torch.Tensor) else list(out) if isinstance(out, (tuple, list)) else []
    dtype = str(outs[0].dtype).replace('torch.', '') if outs and isinstance(outs[0], torch.Tensor) else ''
    return statistics.median(times), nbytes(inputs), params, dtype


def import_file(path, a):
    import torch
    torch.set_num_threads(a.threads)
    name = 'kb_' + os.path.splitext(os.path.basename(path))[0].replace('-', '_')
    out = {'file': os.path.abspath(path), 'ok': False}
    try:
        module = kb.load_module(path, name)
    except Exception as e:  # noqa: BLE001
        out['error'] = f"{path}: cannot load: {type(e).__name__}: {e}"
        return out
    missing = [n for n in ('Model', 'get_inputs', 'get_init_inputs') if not hasattr(module, n)]
    if missing:
        out['error'] = f"{path}: not a KernelBench problem file: no {', '.join(missing)}"
        return out
    originals = {n: getattr(module, n) for n in kb.scaled_names(module)}
    budget_bytes = a.memory_mb * 1024 * 1024
    if a.scale:
        scale = a.scale
    elif a.device != 'cpu':
        scale = 1.0
    else:
        scale = 1.0
        while scale > 1.0 / 65536:
            try:
                in_bytes, params = estimate(module, originals, scale)
            except Exception as e:  # noqa: BLE001
                out['error'] = f"{path}: get_inputs() fails: {type(e).__name__}: {e}"
                return out
            if in_bytes + (params or 0) <= budget_bytes / 16:
                break
            scale /= 2
    # Then halve until one forward pass fits the time budget (a scale whose sizes break the model,
    # e.g. a head count that no longer divides, is skipped).
    last_error = None
    while True:
        try:
            ms, in_bytes, params, dtype = measure(module, originals, scale, a.device)
            last_error = None
        except Exception as e:  # noqa: BLE001
            ms, last_error = None, f"{type(e).__name__}: {e}"
        if a.scale or a.device != 'cpu' or (ms is not None and ms <= a.budget_ms) or scale <= 1.0 / 65536:
            break
        scale /= 2
    if last_error:
        out['error'] = f"{path}: the reference fails at scale {scale:g}: {last_error}"
        return out
    kb.apply_scale(module, scale, originals)
    out.update(ok=True, scale=scale, forward_ms=round(ms, 3), input_mb=round(in_bytes / 2**20, 3),
               param_mb=round(params / 2**20, 3), dtype=dtype,
               sizes={n: [v, kb.scaled_value(v, scale)] for n, v in originals.items()})
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument('files', nargs='+')
    p.add_argument('--device', default='cpu')
    p.add_argument('--scale', type=float, default=0)
    p.add_argument('--budget-ms', type=float, default=50)
    p.add_argument('--memory-mb', type=float, default=1024)
    p.add_argument('--threads', type=int, default=1)
    a = p.parse_args()
    for path in a.files:
        print(json.dumps(import_file(path, a)), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
