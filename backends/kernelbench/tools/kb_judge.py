"""The judge of a kernelbench evaluation (trusted; runs as a judge step: reads the candidate's files
as data, never imports or runs the candidate, writes only its own directory).

  kb_judge.py static --candidate FILE --start FILE --device D --result RESULT
      Static checks before anything is built: a class ModelNew, kernels through load_inline (and a
      __global__ kernel on cuda), no try/except (a fallback to the reference on failure).
  kb_judge.py check  --candidate FILE --start FILE --reference FILE --channels 3 --seed S ...
      KernelBench's protocol (its eval.py, facts in REFERENCE.md): correctness on 5 trials with fresh
      inputs and seeds, allclose with atol = rtol = 1e-4 for fp32 outputs and 1e-2 for fp16/bf16; then
      warm-ups and timed trials (an L2 flush before each on CUDA), mean and median, against the eager
      reference timed here (and torch.compile where this torch has it). Plus our own: a forward that
      runs the same aten compute ops as the reference is a fallback, not a kernel, and is rejected.

The judge owns the seed, the inputs, the clock and the verdict: the candidate runs in the worker
process (kb_worker.py serve), which the judge drives over shared memory and times with its own clock.
"""
import argparse
import ast
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kb_common as kb  # noqa: E402

# Ops that move, view or allocate: a candidate may use them around its kernels freely.
TRIVIAL_OPS = {
    'aten::empty', 'aten::empty_like', 'aten::empty_strided', 'aten::zeros', 'aten::zeros_like', 'aten::ones',
    'aten::ones_like', 'aten::full', 'aten::view', 'aten::reshape', 'aten::_reshape_alias', 'aten::as_strided',
    'aten::contiguous', 'aten::clone', 'aten::copy_', 'aten::to', 'aten::_to_copy', 'aten::detach', 'aten::detach_',
    'aten::t', 'aten::transpose', 'aten::permute', 'aten::expand', 'aten::select', 'aten::slice', 'aten::unsqueeze',
    'aten::squeeze', 'aten::flatten', 'aten::fill_', 'aten::zero_', 'aten::lift_fresh', 'aten::item',
    'aten::_local_scalar_dense', 'aten::resize_', 'aten::alias', 'aten::unbind', 'aten::split', 'aten::chunk',
    'aten::narrow', 'aten::numpy_T', 'aten::expand_as', 'aten::view_as', 'aten::resolve_conj', 'aten::resolve_neg',
    'aten::is_nonzero', 'aten::size', 'aten::stride', 'aten::cat', 'aten::stack', 'aten::_unsafe_view',
    'aten::unflatten', 'aten::new_empty', 'aten::new_zeros', 'aten::record_stream', 'aten::set_',
}


def write_result(path, status, correct, log, metrics=None, feedback=None, flags=None):
    if status == 'error':
        print(log, file=sys.stderr)
    with open(path, 'w') as f:
        json.dump({'status': status, 'correct': correct, 'log': log, 'metrics': metrics or {},
                   'feedback': feedback or [], 'flags': flags or []}, f, indent=1)


def read_text(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


# ---- static checks --------------------------------------------------------------------------------
def static_problems(text, device):
    """Reasons to reject a candidate without running it (empty: none)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return [f"line {e.lineno}: Python syntax error: {e.msg}"], True
    problems = []
    classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    if 'ModelNew' not in classes:
        problems.append("no class ModelNew: KernelBench candidates define class ModelNew(nn.Module)")
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) or type(node).__name__ == 'TryStar':
            problems.append(f"line {node.lineno}: try/except is not allowed (it is how a kernel falls back to the "
                            "reference when it fails; KernelBench's static checker rejects it too)")
            break
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
            {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    if 'load_inline' not in names:
        problems.append("no torch.utils.cpp_extension.load_inline: the kernels must be written inline (C++"
                        + (" with a __global__ CUDA kernel" if device == 'cuda' else "") + ") and loaded with load_inline")
    if device == 'cuda' and '__global__' not in text:
        problems.append("no __global__ kernel: on device cuda the candidate's work is a CUDA kernel")
    return problems, False


def cmd_static(a):
    text = read_text(a.candidate)
    if os.path.exists(a.start) and text == read_text(a.start):
        return 0  # the start: the reference itself, measured as the baseline
    problems, syntax = static_problems(text, a.device)
    if problems:
        write_result(a.result, 'compile_error' if syntax else 'rejected', False,
                     "static check: " + "; ".join(problems), feedback=problems)
        return 1
    return 0


# ---- the worker -----------------------------------------------------------------------------------
class Worker:
    def __init__(self, fd, pid, timeout_s):
        self.mem = kb.open_channel(fd)
        self.pid = pid
        self.seq = 0
        self.timeout_s = timeout_s

    def alive(self):
        if not self.pid:
            return True
        try:
            os.kill(self.pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True

    def request(self, header, tensors=(), timeout_s=None):
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        kb.write_area(self.mem, kb.REQ_AREA, header, tensors)
        kb.put_u32(self.mem, kb.OFF_REQ, self.seq)
        if not kb.wait_word(self.mem, kb.OFF_DONE, self.seq, timeout_s or self.timeout_s, alive=self.alive):
            raise TimeoutError("the candidate's process " + ("exited" if not self.alive() else "did not answer in time")
                               + f" (request '{header.get('cmd')}')")
        status = kb.get_u32(self.mem, kb.OFF_STATUS)
        answer, tensors = kb.read_area(self.mem, kb.ANS_AREA)
        if status != 0:
            raise WorkerError(str(answer.get('error', 'unknown error')), str(answer.get('trace', '')))
        return answer, tensors

    def timed(self, noop=False):
        """One timed call: the worker gets ready (flush, sync), then the judge's clock runs from its
        word to the worker's done."""
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        seq = self.seq
        kb.write_area(self.mem, kb.REQ_AREA, {'cmd': 'timed', 'noop': noop})
        kb.put_u32(self.mem, kb.OFF_REQ, seq)
        if not kb.wait_word(self.mem, kb.OFF_READY, seq, self.timeout_s, alive=self.alive):
            if kb.get_u32(self.mem, kb.OFF_DONE) == seq:  # failed before getting ready
                answer, _ = kb.read_area(self.mem, kb.ANS_AREA)
                raise WorkerError(str(answer.get('error', 'unknown error')), str(answer.get('trace', '')))
            raise TimeoutError("the candidate's process did not get ready for a timed call")
        t0 = time.perf_counter_ns()
        kb.put_u32(self.mem, kb.OFF_GO, seq)
        mem, off = self.mem, kb.OFF_DONE
        get = kb.get_u32
        deadline = t0 + int(self.timeout_s * 1e9)
        while get(mem, off) != seq:
            if time.perf_counter_ns() > deadline:
                raise TimeoutError("a timed call did not finish in time")
        t1 = time.perf_counter_ns()
        if get(mem, kb.OFF_STATUS) != 0:
            answer, _ = kb.read_area(self.mem, kb.ANS_AREA)
            raise WorkerError(str(answer.get('error', 'unknown error')), str(answer.get('trace', '')))
        return (t1 - t0) / 1e6


class WorkerError(Exception):
    def __init__(self, message, trace):
        super().__init__(message)
        self.trace = trace


def start_reference_worker(a, candidate_pid):
    """The start file (the reference as ModelNew) served by a process of the judge's own (trusted code:
    the user's reference), pinned to the candidate worker's CPUs. None without a start file."""
    import subprocess
    import tempfile
    if not a.start or not os.path.exists(a.start):
        return None
    fd = os.memfd_create('kb-reference')
    os.ftruncate(fd, kb.CHANNEL_BYTES)
    ext = tempfile.mkdtemp(prefix='kb-ref-')
    process = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'kb_worker.py'), 'serve',
                                a.start, '--ext-dir', ext, '--channel-fd', str(fd)], pass_fds=(fd,))
    if candidate_pid:
        try:
            os.sched_setaffinity(process.pid, os.sched_getaffinity(candidate_pid))
        except OSError:
            pass
    timer = Worker(fd, process.pid, a.timeout)
    return timer, process


# ---- check and time -------------------------------------------------------------------------------
def outputs_of(value):
    import torch
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)) and all(isinstance(v, torch.Tensor) for v in value):
        return list(value)
    raise TypeError(f"the reference's forward returned {type(value).__name__}")


def tolerance_for(spec, outputs):
    import torch
    if spec and spec != 'auto':
        parts = dict(p.split('=') for p in spec.split(','))
        return float(parts['rtol']), float(parts['atol'])
    low = any(o.dtype in (torch.float16, torch.bfloat16) for o in outputs)
    return (1e-2, 1e-2) if low else (1e-4, 1e-4)


def compare(ref, got, rtol, atol):
    """None when `got` matches `ref`, else why not."""
    import torch
    if len(ref) != len(got):
        return f"{len(got)} outputs, expected {len(ref)}"
    for i, (r, g) in enumerate(zip(ref, got)):
        if tuple(r.shape) != tuple(g.shape):
            return f"output {i}: shape {tuple(g.shape)}, expected {tuple(r.shape)}"
        r = r.detach().cpu()
        g = g.detach().cpu()
        if r.dtype != g.dtype:
            g = g.to(r.dtype)
        if not torch.allclose(g, r, rtol=rtol, atol=atol, equal_nan=False):
            rf, gf = r.double(), g.double()
            diff = (gf - rf).abs()
            nan = torch.isnan(gf) & ~torch.isnan(rf)
            bad = (diff > atol + rtol * rf.abs()) | nan
            worst = int(torch.nan_to_num(diff, nan=float('inf')).argmax())
            idx = []
            for s in reversed(r.shape):
                idx.append(worst % s)
                worst //= s
            idx = tuple(reversed(idx))
            return (f"output {i}: {int(bad.sum())} of {r.numel()} elements differ beyond rtol={rtol}, atol={atol}; "
                    f"worst at {list(idx)}: {gf[idx].item():.6g}, expected {rf[idx].item():.6g}"
                    + (f"; {int(nan.sum())} NaN" if int(nan.sum()) else ""))
    return None


def stats(samples):
    s = sorted(samples)
    return {'mean': statistics.fmean(s), 'median': statistics.median(s),
            'std': statistics.pstdev(s) if len(s) > 1 else 0.0, 'min': s[0], 'max': s[-1], 'n': len(s)}


def fmt_ms(v):
    return f"{v:.3g} ms" if v >= 0.01 else f"{v * 1000:.3g} µs"


def time_reference(model, inputs, device, warmup, trials):
    import torch
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=device) if device.type == 'cuda' else None
    samples = []
    with torch.no_grad():
        for i in range(warmup + trials):
            if flush is not None:
                flush.zero_()
                torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            model(*inputs)
            if device.type == 'cuda':
                torch.cuda.synchronize()
            t1 = time.perf_counter_ns()
            if i >= warmup:
                samples.append((t1 - t0) / 1e6)
    return samples


def profile_ops(model, inputs, device):
    import torch
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == 'cuda' else [])
    with torch.no_grad(), profile(activities=activities) as prof:
        model(*inputs)
        if device.type == 'cuda':
            torch.cuda.synchronize()
    return {e.key for e in prof.key_averages()}


def compute_ops(ops):
    return {op for op in ops if op.startswith('aten::') and op not in TRIVIAL_OPS}


def cmd_check(a):
    import random
    import torch

    result = a.result
    rng = random.Random(a.seed)
    device = torch.device(a.device)
    if device.type == 'cuda' and not torch.cuda.is_available():
        write_result(result, 'error', False, "device cuda: this torch has no CUDA device")
        return 2
    torch.set_num_threads(a.threads)
    is_start = os.path.exists(a.start) and read_text(a.candidate) == read_text(a.start)

    # The reference, trusted: the user's KernelBench file at the problem's scale.
    ref_module = kb.load_module(a.reference, 'reference')
    originals = kb.apply_scale(ref_module, a.scale)
    init_args = list(ref_module.get_init_inputs())
    try:
        json.dumps(init_args)
    except TypeError:
        write_result(result, 'error', False, "get_init_inputs() returns values that are not plain numbers or lists")
        return 2
    init_seed = rng.randrange(1 << 31)
    kb.set_seed(init_seed)
    ref_model = ref_module.Model(*init_args)
    if isinstance(ref_model, torch.nn.Module):
        ref_model = ref_model.to(device)

    worker = Worker(int(a.channels.split(',')[0]), int(a.worker_pids.split(',')[0]) if a.worker_pids else 0, a.timeout)
    feedback, flags = [], []
    scale_note = (f"sizes are the file's scaled by {a.scale:g} (module-level sizes such as "
                  + ", ".join(f"{n}={kb.scaled_value(v, a.scale)} (from {v})" for n, v in list(originals.items())[:4])
                  + ")") if a.scale < 1 else "sizes are the file's own"
    try:
        worker.request({'cmd': 'init', 'init_args': init_args, 'init_seed': init_seed, 'scale': a.scale,
                        'device': a.device, 'threads': a.threads}, timeout_s=max(a.timeout, 120))
        # Correctness: fresh inputs from a fresh seed per trial.
        rtol = atol = None
        for trial in range(a.correctness_trials):
            kb.set_seed(rng.randrange(1 << 31))
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref_module.get_inputs()]
            if not all(isinstance(x, torch.Tensor) for x in inputs):
                write_result(result, 'error', False, "get_inputs() returns something other than tensors; not supported")
                return 2
            with torch.no_grad():
                ref_out = outputs_of(ref_model(*inputs))
            if rtol is None:
                rtol, atol = tolerance_for(a.tolerance, ref_out)
            _, got = worker.request({'cmd': 'check'}, [x.cpu() for x in inputs])
            why = compare(ref_out, got, rtol, atol)
            if why:
                write_result(result, 'incorrect', False, f"correctness trial {trial + 1} of {a.correctness_trials}: {why}",
                             feedback=[f"wrong result on trial {trial + 1} ({scale_note}): {why}"])
                return 1

        # Timing inputs, and the fallback check on them.
        kb.set_seed(rng.randrange(1 << 31))
        inputs = [x.to(device) for x in ref_module.get_inputs()]
        with torch.no_grad():
            ref_out = outputs_of(ref_model(*inputs))
        worker.request({'cmd': 'load'}, [x.cpu() for x in inputs])
        ref_ops = compute_ops(profile_ops(ref_model, inputs, device))
        cand_answer, _ = worker.request({'cmd': 'profile'})
        cand_ops = compute_ops(set(cand_answer.get('ops', [])))
        if not is_start and ref_ops and ref_ops <= cand_ops:
            write_result(result, 'rejected', False,
                         "fallback: the candidate's forward runs every compute op of the reference ("
                         + ", ".join(sorted(ref_ops)) + "): it calls PyTorch for the work instead of its own kernel",
                         feedback=["rejected as a fallback to PyTorch: the forward pass ran " + ", ".join(sorted(ref_ops))
                                   + " like the reference; replace at least one of them with your own kernel"],
                         flags=["fallback: same aten compute ops as the reference"])
            return 1

        # The eager reference is timed the same way: the start file (the reference as ModelNew) in a
        # process of the judge's own, on the candidate's CPUs, over the same kind of channel; the two
        # alternate, so drift and the channel's round trip fall on both alike.
        ref_worker = start_reference_worker(a, worker.pid)
        init = {'cmd': 'init', 'init_args': init_args, 'init_seed': init_seed, 'scale': a.scale, 'device': a.device,
                'threads': a.threads}
        ref_timer = None
        if ref_worker is not None:
            ref_timer, ref_process = ref_worker
            ref_timer.request(init, timeout_s=max(a.timeout, 120))
            ref_timer.request({'cmd': 'load'}, [x.cpu() for x in inputs])
        overhead = [worker.timed(noop=True) for _ in range(20)]
        for _ in range(a.warmup):
            worker.timed()
            if ref_timer:
                ref_timer.timed()
        samples, ref_samples = [], []
        for i in range(a.trials):
            pair = [(samples, worker), (ref_samples, ref_timer)] if ref_timer else [(samples, worker)]
            for out, w in (pair if i % 2 == 0 else pair[::-1]):
                out.append(w.timed())
        if ref_timer:
            ref_timer.request({'cmd': 'exit'}, timeout_s=10)
            ref_process.wait(timeout=10)
        _, last = worker.request({'cmd': 'fetch'})
        why = compare(ref_out, last, rtol, atol)
        if why:
            write_result(result, 'incorrect', False, f"the output of the last timed call is wrong: {why}",
                         feedback=[f"correct when checked, wrong when timed: {why}"],
                         flags=["timed output differs from the checked one"])
            return 1
        worker.request({'cmd': 'exit'}, timeout_s=10)
    except TimeoutError as e:
        write_result(result, 'timeout', False, str(e))
        return 1
    except WorkerError as e:
        write_result(result, 'crash', False, f"the candidate raised {e}\n{e.trace}",
                     feedback=[f"the candidate raised {e}"])
        return 1

    cand = stats(samples)
    ref = stats(ref_samples if ref_samples else time_reference(ref_model, inputs, device, a.warmup, a.trials))
    speedup = ref['mean'] / cand['mean'] if cand['mean'] > 0 else float('inf')
    metrics = {'latency_ms': {k: (round(v, 6) if isinstance(v, float) else v) for k, v in cand.items()},
               'reference_ms': {k: (round(v, 6) if isinstance(v, float) else v) for k, v in ref.items()},
               'speedup_vs_eager': round(speedup, 4),
               'channel_overhead_ms': round(statistics.median(overhead), 6),
               'scale': a.scale}
    feedback.append(f"{'reference (start)' if is_start else 'candidate'}: mean {fmt_ms(cand['mean'])}, median "
                    f"{fmt_ms(cand['median'])}, std {fmt_ms(cand['std'])} over {cand['n']} trials on {a.device} "
                    f"({a.threads} thread{'s' if a.threads != 1 else ''}); eager reference mean {fmt_ms(ref['mean'])}, "
                    f"median {fmt_ms(ref['median'])}, timed alternately with it: {speedup:.2f}x "
                    f"({'faster' if speedup >= 1 else 'slower'})")
    feedback.append(scale_note)
    compiled = getattr(torch, 'compile', None)
    if compiled is None:
        feedback.append(f"torch.compile is not available in torch {torch.__version__}: no compiled-reference comparison")
    else:
        try:
            cmodel = compiled(ref_model)
            csamples = stats(time_reference(cmodel, inputs, device, max(a.warmup, 3), a.trials))
            metrics['compiled_reference_ms'] = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in csamples.items()}
            metrics['speedup_vs_compile'] = round(csamples['mean'] / cand['mean'], 4)
            feedback.append(f"torch.compile reference mean {fmt_ms(csamples['mean'])}: {metrics['speedup_vs_compile']:.2f}x")
        except Exception as e:  # noqa: BLE001 - a reference that does not compile is only noted
            feedback.append(f"torch.compile of the reference failed ({type(e).__name__}); no compiled comparison")
    if speedup > 10:
        flags.append(f"suspicious: {speedup:.1f}x faster than the eager reference (KernelBench flags speedups above 10x)")
    cv = cand['std'] / cand['mean'] if cand['mean'] else 0
    if cv > 0.1:
        feedback.append(f"noisy timing: coefficient of variation {cv:.0%}")
    log = (f"correct on {a.correctness_trials} trials (rtol={rtol:g}, atol={atol:g}); timed {a.trials} trials after "
           f"{a.warmup} warm-ups{' with an L2 flush before each' if device.type == 'cuda' else ''}, alternating with the "
           f"eager reference; the judge's clock includes a channel round trip of about {fmt_ms(statistics.median(overhead))} "
           f"for both")
    write_result(result, 'ok', True, log, metrics, feedback, flags)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument('mode', choices=['static', 'check'])
    p.add_argument('--candidate', required=True)
    p.add_argument('--start', default='')
    p.add_argument('--reference', default='')
    p.add_argument('--device', default='cpu')
    p.add_argument('--channels', default='3')
    p.add_argument('--worker-pids', default='')
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--scale', type=float, default=1.0)
    p.add_argument('--tolerance', default='auto')
    p.add_argument('--threads', type=int, default=1)
    p.add_argument('--correctness-trials', type=int, default=5)
    p.add_argument('--warmup', type=int, default=3)
    p.add_argument('--trials', type=int, default=100)
    p.add_argument('--timeout', type=float, default=60)
    p.add_argument('--result', required=True)
    a = p.parse_args()
    if a.mode == 'static':
        return cmd_static(a)
    try:
        return cmd_check(a)
    except Exception as e:  # noqa: BLE001 - a fault of the harness or the reference, not the candidate
        import traceback
        write_result(a.result, 'error', False, f"the judge failed: {type(e).__name__}: {e}\n{traceback.format_exc()[-3000:]}")
        return 2


if __name__ == '__main__':
    sys.exit(main())
