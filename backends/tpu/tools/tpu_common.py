"""Shared by the tpu judge and worker: the problem's shapes and the shared-memory channel between them.

The channel is one memfd per worker (fd 3 in the worker; the judge gets the same file), 1 GiB as the
evaluator creates it. Page 0 holds little-endian u32 control words; the judge writes requests in the
first half of the rest, the worker answers in the second. An area is a length-prefixed JSON header
followed by the raw bytes of numpy arrays. Every size and offset read from an area is checked against
the area's bounds, so a worker cannot make the judge read outside its answer.
"""
import json
import mmap
import struct
import time

OFF_REQ, OFF_DONE, OFF_GO, OFF_READY, OFF_STATUS = 64, 128, 192, 256, 320
CONTROL_BYTES = 4096
CHANNEL_BYTES = 1 << 30
REQ_AREA = CONTROL_BYTES
AREA_BYTES = (CHANNEL_BYTES - CONTROL_BYTES) // 2
ANS_AREA = CONTROL_BYTES + AREA_BYTES
ALIGN = 64
# The element types a problem's inputs and outputs may have (the judge refuses others).
DTYPES = ('float32', 'float16', 'bfloat16', 'int32', 'int8', 'uint8', 'bool', 'float64', 'int64')


class ChannelError(Exception):
    pass


def parse_shapes(text):
    """`M=512,N=256;M=128,N=128` -> [{'M': 512, 'N': 256}, {'M': 128, 'N': 128}]."""
    shapes = []
    for part in (text or '').split(';'):
        part = part.strip()
        if not part:
            continue
        shape = {}
        for item in part.split(','):
            key, _, value = item.partition('=')
            shape[key.strip()] = int(value)
        shapes.append(shape)
    return shapes


def parse_tolerance(text):
    parts = dict(p.split('=') for p in text.split(',') if '=' in p)
    return float(parts.get('rtol', 1e-3)), float(parts.get('atol', 1e-3))


def open_channel(fd):
    return mmap.mmap(fd, CHANNEL_BYTES, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)


def get_u32(mem, off):
    return struct.unpack_from('<I', mem, off)[0]


def put_u32(mem, off, value):
    struct.pack_into('<I', mem, off, value & 0xFFFFFFFF)


def dtype_name(array):
    name = str(array.dtype)
    if name not in DTYPES:
        raise ChannelError(f"arrays of {name} cannot be exchanged (supported: {', '.join(DTYPES)})")
    return name


def numpy_dtype(name):
    import numpy as np
    if name == 'bfloat16':
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def write_area(mem, base, header, arrays=()):
    import numpy as np
    entries, blobs, offset = [], [], 0
    for a in arrays:
        data = np.ascontiguousarray(a)
        entries.append({'dtype': dtype_name(data), 'shape': list(data.shape), 'offset': offset, 'bytes': data.nbytes})
        blobs.append((offset, data))
        offset += (data.nbytes + ALIGN - 1) // ALIGN * ALIGN
    raw = json.dumps(dict(header, arrays=entries)).encode()
    data_base = base + 8 + (len(raw) + ALIGN - 1) // ALIGN * ALIGN
    if data_base - base + offset > AREA_BYTES:
        raise ChannelError(f"{offset} bytes of arrays do not fit the channel ({AREA_BYTES} bytes)")
    struct.pack_into('<Q', mem, base, len(raw))
    mem[base + 8:base + 8 + len(raw)] = raw
    for off, data in blobs:
        if data.nbytes:
            mem[data_base + off:data_base + off + data.nbytes] = data.reshape(-1).view(np.uint8).tobytes()


def read_header(mem, base):
    """An area's JSON header alone (its arrays' dtypes and shapes, not their data)."""
    (length,) = struct.unpack_from('<Q', mem, base)
    if length <= 0 or length > 1 << 20:
        raise ChannelError(f"bad header length {length}")
    header = json.loads(bytes(mem[base + 8:base + 8 + length]))
    if not isinstance(header, dict):
        raise ChannelError("the header is not an object")
    return header


def read_area(mem, base, max_arrays=64):
    import numpy as np
    header = read_header(mem, base)
    (length,) = struct.unpack_from('<Q', mem, base)
    data_base = base + 8 + (length + ALIGN - 1) // ALIGN * ALIGN
    entries = header.get('arrays', [])
    if not isinstance(entries, list) or len(entries) > max_arrays:
        raise ChannelError("bad array list")
    out = []
    for e in entries:
        if not isinstance(e, dict) or e.get('dtype') not in DTYPES:
            raise ChannelError(f"bad dtype in {e!r}")
        dtype = numpy_dtype(e['dtype'])
        shape = e.get('shape')
        if not isinstance(shape, list) or len(shape) > 8 or not all(isinstance(s, int) and 0 <= s < 1 << 40 for s in shape):
            raise ChannelError(f"bad shape {shape!r}")
        count = 1
        for s in shape:
            count *= s
        nbytes = count * dtype.itemsize
        off = e.get('offset')
        if not isinstance(off, int) or off < 0 or nbytes != e.get('bytes') or data_base + off + nbytes > base + AREA_BYTES:
            raise ChannelError("an array outside the channel")
        out.append(np.frombuffer(bytes(mem[data_base + off:data_base + off + nbytes]), dtype=dtype).reshape(shape))
    return header, out


def wait_word(mem, off, value, timeout_s, alive=None, spin_s=0.002):
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
            time.sleep(0.0002)
