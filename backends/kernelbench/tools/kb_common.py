"""Shared by the kernelbench judge, worker and importer: loading a KernelBench-format file with its
sizes scaled, and the shared-memory channel between the judge and a worker.

A KernelBench problem file defines `class Model(nn.Module)`, module-level size constants,
`get_inputs()` and `get_init_inputs()`. Both functions read the module's globals when called, so
scaling a problem is setting those globals before calling them.
"""
import importlib.util
import json
import math
import mmap
import struct
import sys
import time

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


# ---- the channel ---------------------------------------------------------------------------------
# One memfd per worker (fd 3 in the worker; the judge gets the same file). Page 0 is the control
# block of little-endian u32 words; the judge's area (requests) starts at REQ_AREA, the worker's
# (answers) at ANS_AREA. Each area holds a JSON header (length-prefixed) then raw tensor bytes.
# The judge reads only the worker's sequence word, status, and its answer area, and checks every
# size and offset it reads there against the area's bounds.
MAGIC = 0x4843424B  # "KBCH"
OFF_MAGIC, OFF_REQ, OFF_DONE, OFF_GO, OFF_READY, OFF_STATUS = 0, 64, 128, 192, 256, 320
CONTROL_BYTES = 4096
CHANNEL_BYTES = 1 << 30
REQ_AREA = CONTROL_BYTES
ANS_AREA = CONTROL_BYTES + (CHANNEL_BYTES - CONTROL_BYTES) // 2
AREA_BYTES = (CHANNEL_BYTES - CONTROL_BYTES) // 2
ALIGN = 64


class ChannelError(Exception):
    pass


def open_channel(fd):
    return mmap.mmap(fd, CHANNEL_BYTES, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)


def get_u32(mem, off):
    return struct.unpack_from('<I', mem, off)[0]


def put_u32(mem, off, value):
    struct.pack_into('<I', mem, off, value & 0xFFFFFFFF)


def write_area(mem, base, header, tensors=()):
    """Writes a JSON header and tensors (CPU, contiguous) into an area; returns the header written."""
    entries = []
    blobs = []
    offset = 0
    for t in tensors:
        data = t.detach().contiguous().cpu()
        nbytes = data.numel() * data.element_size()
        entries.append({'dtype': str(data.dtype).replace('torch.', ''), 'shape': list(data.shape),
                        'offset': offset, 'bytes': nbytes})
        blobs.append((offset, data, nbytes))
        offset += (nbytes + ALIGN - 1) // ALIGN * ALIGN
    header = dict(header, tensors=entries)
    raw = json.dumps(header).encode()
    data_base = base + 8 + (len(raw) + ALIGN - 1) // ALIGN * ALIGN
    if data_base - base + offset > AREA_BYTES:
        raise ChannelError(f"tensors of {offset} bytes do not fit the channel ({AREA_BYTES} bytes)")
    struct.pack_into('<Q', mem, base, len(raw))
    mem[base + 8:base + 8 + len(raw)] = raw
    import torch
    for off, data, nbytes in blobs:
        if nbytes:
            view = torch.frombuffer(mem, dtype=torch.uint8, count=nbytes, offset=data_base + off)
            view.copy_(data.view(-1).view(torch.uint8))
    return header


def read_header(mem, base):
    """An area's JSON header alone (its tensors' dtypes and shapes, not their data)."""
    (length,) = struct.unpack_from('<Q', mem, base)
    if length <= 0 or length > 1 << 20:
        raise ChannelError(f"bad header length {length}")
    header = json.loads(bytes(mem[base + 8:base + 8 + length]))
    if not isinstance(header, dict):
        raise ChannelError("header is not an object")
    return header


def read_area(mem, base, copy=True, max_tensors=64):
    """Reads a header and its tensors from an area, checking every length and offset."""
    import torch
    header = read_header(mem, base)
    (length,) = struct.unpack_from('<Q', mem, base)
    data_base = base + 8 + (length + ALIGN - 1) // ALIGN * ALIGN
    out = []
    entries = header.get('tensors', [])
    if not isinstance(entries, list) or len(entries) > max_tensors:
        raise ChannelError("bad tensor list")
    for e in entries:
        dtype = getattr(torch, str(e.get('dtype')), None)
        if not isinstance(dtype, torch.dtype):
            raise ChannelError(f"bad dtype {e.get('dtype')!r}")
        shape = e.get('shape')
        if not isinstance(shape, list) or not all(isinstance(s, int) and 0 <= s < 1 << 40 for s in shape):
            raise ChannelError(f"bad shape {shape!r}")
        numel = 1
        for s in shape:
            numel *= s
        nbytes = numel * torch.empty((), dtype=dtype).element_size()
        off = e.get('offset')
        if not isinstance(off, int) or off < 0 or nbytes != e.get('bytes') or data_base + off + nbytes > base + AREA_BYTES:
            raise ChannelError("tensor outside the channel")
        if nbytes == 0:
            out.append(torch.empty(shape, dtype=dtype))
            continue
        raw = torch.frombuffer(mem, dtype=torch.uint8, count=nbytes, offset=data_base + off)
        t = raw.view(dtype).view(shape)
        out.append(t.clone() if copy else t)
    return header, out


def wait_word(mem, off, value, timeout_s, spin_s=0.002, alive=None):
    """Waits until the u32 at `off` equals `value`: spins briefly, then sleeps in short steps."""
    start = time.perf_counter()
    while True:
        if get_u32(mem, off) == value:
            return True
        now = time.perf_counter()
        if now - start > timeout_s:
            return False
        if now - start > spin_s:
            if alive is not None and not alive():
                return get_u32(mem, off) == value
            time.sleep(0.0001)
