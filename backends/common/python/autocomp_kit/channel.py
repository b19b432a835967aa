"""The shared-memory channel between a judge and one worker (a candidate's process, or a trusted process
of the judge's own), as the evaluator sets it up: one memfd per worker, CHANNEL_BYTES long, fd 3 in the
worker; the judge gets the same file (the step's {channels}) and the worker's pid ({worker_pids}).

Layout: page 0 holds little-endian u32 control words (OFF_*); the judge writes requests in the request area
(REQ_AREA), the worker answers in the answer area (ANS_AREA). An area is a u64 length, a JSON header and the
raw bytes of the arrays the header's "arrays" list describes (dtype, shape, offset, bytes). The judge reads
only the worker's words and its answer area, and checks every length, dtype, shape and offset it reads there
against the area's bounds (ChannelError): a worker cannot make the judge read outside its answer.

A request: the judge bumps OFF_REQ; the worker answers, sets OFF_STATUS (0 ok, else failed: the header has
`error`, `phase`, `trace`) and sets OFF_DONE to the request's number. A timed call adds a handshake: the worker
gets ready (OFF_READY), the judge starts its clock and gives the word (OFF_GO), and the worker says done
only once the outputs are in the answer area, so the judge's clock covers the copy of every output.

Arrays travel through a codec: NUMPY (numpy.ndarray) or TORCH (torch.Tensor on the CPU).
"""
import json
import mmap
import os
import struct
import time

OFF_MAGIC, OFF_REQ, OFF_DONE, OFF_GO, OFF_READY, OFF_STATUS = 0, 64, 128, 192, 256, 320
CONTROL_BYTES = 4096
CHANNEL_BYTES = 1 << 30
AREA_BYTES = (CHANNEL_BYTES - CONTROL_BYTES) // 2
REQ_AREA = CONTROL_BYTES
ANS_AREA = CONTROL_BYTES + AREA_BYTES
ALIGN = 64
MAX_HEADER = 1 << 20
# The element types that may cross (the judge refuses others).
DTYPES = ('float32', 'float16', 'bfloat16', 'float64', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool')


class ChannelError(Exception):
    pass


def open_channel(fd):
    return mmap.mmap(fd, CHANNEL_BYTES, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)


def new_channel(name):
    """A fresh channel for a worker the judge starts itself: (fd, mapping). Pass fd to the worker (pass_fds)."""
    fd = os.memfd_create(name)
    os.ftruncate(fd, CHANNEL_BYTES)
    return fd, open_channel(fd)


def get_u32(mem, off):
    return struct.unpack_from('<I', mem, off)[0]


def put_u32(mem, off, value):
    struct.pack_into('<I', mem, off, value & 0xFFFFFFFF)


def wait_word(mem, off, value, timeout_s, alive=None, spin_s=0.002, alive_every_s=0.01):
    """Waits until the u32 at `off` equals `value`: spins briefly, then sleeps in short steps. False on timeout,
    or when `alive()` (asked every `alive_every_s`, not at every step: it reads /proc) says the other side is gone."""
    start = time.perf_counter()
    asked = start
    while True:
        if get_u32(mem, off) == value:
            return True
        now = time.perf_counter()
        if now - start > timeout_s:
            return False
        if now - start > spin_s:
            if alive is not None and now - asked > alive_every_s:
                asked = now
                if not alive():
                    return get_u32(mem, off) == value
            time.sleep(0.0001)


# ---- codecs -----------------------------------------------------------------------------------------
class _Numpy:
    name = 'numpy'

    @staticmethod
    def describe(a):
        import numpy as np
        a = np.ascontiguousarray(a)
        dtype = str(a.dtype)
        if dtype not in DTYPES:
            raise ChannelError(f"arrays of {dtype} cannot be exchanged (supported: {', '.join(DTYPES)})")
        return a, dtype, list(a.shape), a.nbytes

    @staticmethod
    def put(mem, offset, a, nbytes):
        import numpy as np
        np.frombuffer(mem, dtype=np.uint8, count=nbytes, offset=offset)[:] = a.reshape(-1).view(np.uint8)

    @staticmethod
    def dtype(name):
        import numpy as np
        if name == 'bfloat16':
            import ml_dtypes
            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(name)

    @classmethod
    def itemsize(cls, name):
        return cls.dtype(name).itemsize

    @classmethod
    def get(cls, mem, offset, dtype, shape, nbytes, copy):
        import numpy as np
        view = np.frombuffer(mem, dtype=np.uint8, count=nbytes, offset=offset).view(cls.dtype(dtype)).reshape(shape)
        return view.copy() if copy else view


class _Torch:
    name = 'torch'

    @staticmethod
    def describe(t):
        data = t.detach().contiguous().cpu()
        dtype = str(data.dtype).replace('torch.', '')
        if dtype not in DTYPES:
            raise ChannelError(f"tensors of {dtype} cannot be exchanged (supported: {', '.join(DTYPES)})")
        return data, dtype, list(data.shape), data.numel() * data.element_size()

    @staticmethod
    def put(mem, offset, data, nbytes):
        import torch
        torch.frombuffer(mem, dtype=torch.uint8, count=nbytes, offset=offset).copy_(data.view(-1).view(torch.uint8))

    @staticmethod
    def itemsize(name):
        import torch
        return torch.empty((), dtype=getattr(torch, name)).element_size()

    @staticmethod
    def get(mem, offset, dtype, shape, nbytes, copy):
        import torch
        t = torch.frombuffer(mem, dtype=torch.uint8, count=nbytes, offset=offset).view(getattr(torch, dtype)).view(shape)
        return t.clone() if copy else t


NUMPY, TORCH = _Numpy, _Torch


def write_area(mem, base, header, arrays=(), codec=NUMPY):
    """Writes a JSON header and arrays into an area; returns the header written (with its "arrays" list)."""
    entries, blobs, offset = [], [], 0
    for a in arrays:
        data, dtype, shape, nbytes = codec.describe(a)
        entries.append({'dtype': dtype, 'shape': shape, 'offset': offset, 'bytes': nbytes})
        blobs.append((offset, data, nbytes))
        offset += (nbytes + ALIGN - 1) // ALIGN * ALIGN
    header = dict(header, arrays=entries)
    raw = json.dumps(header).encode()
    data_base = base + 8 + (len(raw) + ALIGN - 1) // ALIGN * ALIGN
    if len(raw) > MAX_HEADER or data_base - base + offset > AREA_BYTES:
        raise ChannelError(f"{offset} bytes of arrays do not fit the channel ({AREA_BYTES} bytes)")
    struct.pack_into('<Q', mem, base, len(raw))
    mem[base + 8:base + 8 + len(raw)] = raw
    for off, data, nbytes in blobs:
        if nbytes:
            codec.put(mem, data_base + off, data, nbytes)
    return header


def read_header(mem, base):
    """An area's JSON header alone (its arrays' dtypes and shapes, not their data)."""
    (length,) = struct.unpack_from('<Q', mem, base)
    if length <= 0 or length > MAX_HEADER:
        raise ChannelError(f"bad header length {length}")
    try:
        header = json.loads(bytes(mem[base + 8:base + 8 + length]))
    except ValueError as e:
        raise ChannelError(f"the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise ChannelError("the header is not an object")
    return header


def read_area(mem, base, codec=NUMPY, copy=True, max_arrays=64):
    """Reads a header and its arrays from an area, checking every dtype, shape, length and offset."""
    header = read_header(mem, base)
    (length,) = struct.unpack_from('<Q', mem, base)
    data_base = base + 8 + (length + ALIGN - 1) // ALIGN * ALIGN
    entries = header.get('arrays', [])
    if not isinstance(entries, list) or len(entries) > max_arrays:
        raise ChannelError("bad array list")
    out = []
    for e in entries:
        if not isinstance(e, dict) or e.get('dtype') not in DTYPES:
            raise ChannelError(f"bad dtype in {e!r}"[:200])
        shape = e.get('shape')
        if not isinstance(shape, list) or len(shape) > 8 or not all(
                isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 1 << 40 for s in shape):
            raise ChannelError(f"bad shape {shape!r}"[:200])
        count = 1
        for s in shape:
            count *= s
        nbytes = count * codec.itemsize(e['dtype'])
        off = e.get('offset')
        if not isinstance(off, int) or off < 0 or nbytes != e.get('bytes') or data_base + off + nbytes > base + AREA_BYTES:
            raise ChannelError("an array outside the channel")
        out.append(codec.get(mem, data_base + off, e['dtype'], shape, nbytes, copy))
    return header, out


def metadata(header):
    """[(dtype, shape)] of an answer's arrays, as the worker described them."""
    return [(e.get('dtype'), e.get('shape')) for e in header.get('arrays', []) if isinstance(e, dict)]


# ---- the judge's side -------------------------------------------------------------------------------
class WorkerError(Exception):
    """The worker reported a failure of the code it runs: `phase` (import, first call, call) and its traceback."""

    def __init__(self, message, phase='call', trace=''):
        super().__init__(message)
        self.phase = phase
        self.trace = trace


def process_alive(pid):
    """Whether process `pid` exists and is not a zombie (0: not known, taken as alive)."""
    if not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except (OSError, IndexError):
        return True


class Worker:
    """The judge's handle on one worker: requests, and timed calls on the judge's clock."""

    def __init__(self, fd, pid, timeout_s, codec=NUMPY, mem=None):
        self.mem = mem if mem is not None else open_channel(fd)
        self.pid = pid
        self.seq = 0
        self.timeout_s = timeout_s
        self.codec = codec
        self.closed = False

    def alive(self):
        return process_alive(self.pid)

    def _failure(self):
        answer = read_header(self.mem, ANS_AREA)
        return WorkerError(str(answer.get('error', 'unknown error'))[:2000], str(answer.get('phase', 'call')),
                           str(answer.get('trace', ''))[-8000:])

    def request(self, header, arrays=(), timeout_s=None):
        """Sends one request and waits for its answer: (answer header, arrays). WorkerError when the worker
        reports a failure, TimeoutError when it does not answer (or exits), ChannelError when the answer is
        malformed."""
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        write_area(self.mem, REQ_AREA, header, arrays, self.codec)
        put_u32(self.mem, OFF_REQ, self.seq)
        limit = timeout_s or self.timeout_s
        if not wait_word(self.mem, OFF_DONE, self.seq, limit, alive=self.alive):
            if not self.alive():
                raise WorkerError("the candidate's process exited", 'call', '')
            raise TimeoutError(f"the candidate did not answer within {limit:g} s (request '{header.get('cmd')}')")
        if get_u32(self.mem, OFF_STATUS) != 0:
            raise self._failure()
        self.closed = header.get('cmd') == 'exit'
        if self.closed:
            deadline = time.monotonic() + 5
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.01)
        return read_area(self.mem, ANS_AREA, self.codec)

    def timed(self, header, fetch=False):
        """One call timed by this process's clock, from its word to the worker's done (given once the outputs are
        in the shared memory). Returns (ms, the answer's header, and with `fetch` the outputs as they were when the
        clock stopped, else [])."""
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        seq, mem = self.seq, self.mem
        write_area(mem, REQ_AREA, dict(header, cmd='timed'), (), self.codec)
        put_u32(mem, OFF_REQ, seq)
        if not wait_word(mem, OFF_READY, seq, self.timeout_s, alive=self.alive):
            if get_u32(mem, OFF_DONE) == seq:  # failed before getting ready
                raise self._failure()
            raise TimeoutError("the candidate's process did not get ready for a timed call")
        get = get_u32
        t0 = time.perf_counter_ns()
        put_u32(mem, OFF_GO, seq)
        deadline = t0 + int(self.timeout_s * 1e9)
        while get(mem, OFF_DONE) != seq:
            if time.perf_counter_ns() > deadline:
                raise TimeoutError(f"a timed call did not finish within {self.timeout_s:g} s")
        t1 = time.perf_counter_ns()
        if get(mem, OFF_STATUS) != 0:
            raise self._failure()
        answer, arrays = read_area(mem, ANS_AREA, self.codec) if fetch else (read_header(mem, ANS_AREA), [])
        return (t1 - t0) / 1e6, answer, arrays

    def shutdown(self):
        """Asks a worker that is still answering to exit, so that it ends on its own rather than by a signal."""
        if self.closed or not self.alive() or get_u32(self.mem, OFF_DONE) != self.seq:
            return
        try:
            self.request({'cmd': 'exit'}, timeout_s=5)
        except (TimeoutError, WorkerError, ChannelError):
            return


# ---- the worker's side ------------------------------------------------------------------------------
class Server:
    """The worker's end: serve() (or next_request() and answer()), and timed() for the handshake of a timed call."""

    def __init__(self, fd, codec=NUMPY):
        self.mem = open_channel(fd)
        self.codec = codec
        self.seq = 0

    def next_request(self, idle_timeout_s):
        """The next request (header, arrays), or None when none came within `idle_timeout_s`."""
        if not wait_word(self.mem, OFF_REQ, (self.seq + 1) & 0xFFFFFFFF, idle_timeout_s):
            return None
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        return read_area(self.mem, REQ_AREA, self.codec)

    def serve(self, handle, idle_timeout_s):
        """Answers requests until 'exit' (returns 0) or until none comes within `idle_timeout_s` (returns 3).
        handle(cmd, header, arrays) answers each request itself (answer() or timed()) and returns False for a command
        it does not know; what it raises is reported to the judge as the call's failure, with the phase it set in
        self.phase ('import', 'first call', 'call') and the traceback."""
        import traceback
        while True:
            if not wait_word(self.mem, OFF_REQ, (self.seq + 1) & 0xFFFFFFFF, idle_timeout_s):
                return 3
            self.seq = (self.seq + 1) & 0xFFFFFFFF
            self.phase = 'call'
            try:
                header, arrays = read_area(self.mem, REQ_AREA, self.codec)
                cmd = header.get('cmd')
                if cmd == 'exit':
                    self.answer(0, {})
                    return 0
                if not handle(cmd, header, arrays):
                    self.answer(1, {'error': f"unknown command {cmd!r}"})
            except Exception as e:  # noqa: BLE001 - the code the worker runs failed: the judge is told
                self.fail(f"{type(e).__name__}: {e}", self.phase, traceback.format_exc()[-6000:])

    def answer(self, status, header, arrays=()):
        try:
            write_area(self.mem, ANS_AREA, header, arrays, self.codec)
        except Exception as e:  # noqa: BLE001 - outputs the channel cannot carry are the call's failure
            write_area(self.mem, ANS_AREA, {'error': f"{type(e).__name__}: {e}", 'phase': 'call'}, (), self.codec)
            status = 2
        put_u32(self.mem, OFF_STATUS, status)
        put_u32(self.mem, OFF_DONE, self.seq)

    def fail(self, error, phase, trace):
        self.answer(2, {'error': error, 'phase': phase, 'trace': trace})

    def timed(self, run):
        """Says ready, waits for the judge's word, calls run() and writes the arrays it returns (None: no outputs)
        before saying done. The judge's clock runs from its word to the done."""
        mem, seq = self.mem, self.seq
        put_u32(mem, OFF_READY, seq)
        while get_u32(mem, OFF_GO) != seq:
            pass
        outputs = run()
        write_area(mem, ANS_AREA, {'ok': True}, outputs or (), self.codec)
        put_u32(mem, OFF_STATUS, 0)
        put_u32(mem, OFF_DONE, seq)
