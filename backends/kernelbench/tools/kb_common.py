"""Shared by the kernelbench judge, worker and importer: loading a KernelBench-format file with its
sizes scaled, and its inputs as tensors for the channel (autocomp_kit.channel, with its TORCH codec).

A KernelBench problem file defines `class Model(nn.Module)`, module-level size constants,
`get_inputs()` and `get_init_inputs()`. Both functions read the module's globals when called, so
scaling a problem is setting those globals before calling them.
"""
import importlib.util
import math
import sys

# Sizes are module-level ints of at least this value; smaller ones (kernel sizes, strides, channel
# counts of 3) are left alone, and a scaled size never goes below min(value, SIZE_FLOOR).
SIZE_FLOOR = 16


def scaled_value(value, scale):
    """A module-level size at `scale`: an int becomes a multiple of gcd(value, 16), at least
    min(value, 16); a tuple or list of ints (an input shape such as (3, 224, 224)) is scaled item by item."""
    if isinstance(value, (tuple, list)):
        return type(value)(scaled_value(v, scale) for v in value)
    if scale >= 1 or isinstance(value, bool) or not isinstance(value, int) or value < SIZE_FLOOR:
        return value
    grain = math.gcd(value, SIZE_FLOOR)
    out = int(round(value * scale / grain)) * grain
    return max(out, min(value, SIZE_FLOOR))


def _is_size(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= SIZE_FLOOR
    if isinstance(value, (tuple, list)) and value and len(value) <= 8:
        return all(isinstance(v, int) and not isinstance(v, bool) for v in value) and any(v >= SIZE_FLOOR for v in value)
    return False


def scaled_names(module):
    return [name for name, value in vars(module).items() if not name.startswith('_') and _is_size(value)]


def pack_inputs(values):
    """Splits get_inputs()'s values into tensors (sent as data) and a layout that says where each value
    goes: ["t", k] for the k-th tensor, ["v", value] for a plain number, bool or string."""
    import torch
    tensors, layout = [], []
    for v in values:
        if isinstance(v, torch.Tensor):
            layout.append(['t', len(tensors)])
            tensors.append(v)
        elif isinstance(v, (int, float, bool, str)) or v is None:
            layout.append(['v', v])
        else:
            raise TypeError(f"get_inputs() returns a {type(v).__name__}; only tensors and plain values are supported")
    return tensors, layout


def unpack_inputs(tensors, layout):
    out = []
    for kind, v in layout:
        out.append(tensors[v] if kind == 't' else v)
    return out


def apply_scale(module, scale, originals=None):
    """Sets the module's size constants to their values at `scale` (from `originals` when given)."""
    originals = originals if originals is not None else {n: getattr(module, n) for n in scaled_names(module)}
    for name, value in originals.items():
        setattr(module, name, scaled_value(value, scale))
    return originals


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def set_seed(seed):
    import torch
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
