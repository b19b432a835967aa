"""The judge of a kernelbench evaluation (trusted; runs as a judge step: reads the candidate's files
as data, never imports or runs the candidate, writes only its own directory).

  kb_judge.py static --candidate FILE --start FILE --device D --result RESULT
      Before anything is built: a class ModelNew, and nothing that hides a name or a failure (py_guard's
      hardening on the resolved AST: computed attributes, dunders, sys.modules, exec, try, with, **{...}).
  kb_judge.py gate --candidate FILE --start FILE --ext-dir DIR --device D --result RESULT
      After the build: the Python side on an allow-list of torch names and calls (allocation, views, the
      extension's functions), and every shared object under DIR on an allow-list of undefined symbols
      (nm -D): no ATen compute, dispatcher, Python imports or threads. The work is the extension's own.
  kb_judge.py check  --candidate FILE --start FILE --reference FILE --channels 3 --seed S ...
      KernelBench's protocol (its eval.py, facts in REFERENCE.md): correctness on 5 trials with fresh
      inputs and seeds, allclose with atol = rtol = 1e-4 for fp32 outputs and 1e-2 for fp16/bf16; then
      warm-ups and timed trials (an L2 flush before each on CUDA), mean and median, against the eager
      reference timed in a process of the judge's own (and torch.compile where this torch has it). Every
      timed call has fresh inputs (4 buffers in turn), its clock stops when the outputs are in the judge's
      memory, and calls picked from the seed are compared; a speedup above --suspicious is timed again
      with every output checked before it stands.

The judge owns the seed, the inputs, the clock and the verdict: the candidate runs in the worker
process (kb_worker.py serve), which the judge drives over shared memory and times with its own clock.
"""
import argparse
import ast
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The kit sits beside the tools in the cache copy; run from the source tree, it is backends/common/python.
sys.path[:0] = [HERE] if os.path.isdir(os.path.join(HERE, 'autocomp_kit')) else [HERE, os.path.join(HERE, '..', '..', 'common', 'python')]
import kb_common as kb  # noqa: E402
from autocomp_kit import channel, cli, compare as kit_compare, draw, isolation, py_guard, results  # noqa: E402
from autocomp_kit.stats import fmt_ms, paired_speedup, rounded, summary as stats  # noqa: E402

read_text = results.read_text
WorkerError = channel.WorkerError


def write_result(path, status, correct, log, metrics=None, feedback=None, flags=None):
    results.write_result(path, status, correct, log, metrics, feedback, flags, echo='error')


# ---- static checks --------------------------------------------------------------------------------
# The Python side of a candidate is held to an allow-list: what allocates, views, describes or loads
# (the extension's own functions). Compute belongs in the extension, whose shared object the gate checks.
POLICY = py_guard.Policy(
    imports={'torch', 'math', '__future__'},
    modules={'torch.nn', 'torch.utils', 'torch.utils.cpp_extension', 'torch.cuda'},
    paths={'torch.utils.cpp_extension.load_inline', 'torch.Tensor', 'torch.Size', 'torch.device', 'torch.dtype',
           'torch.nn.Module', 'torch.nn.Parameter', 'torch.nn.ParameterList', 'torch.nn.ModuleList',
           'torch.empty', 'torch.empty_like', 'torch.empty_strided', 'torch.zeros', 'torch.zeros_like', 'torch.ones',
           'torch.ones_like', 'torch.full', 'torch.full_like', 'torch.tensor', 'torch.as_tensor', 'torch.arange',
           'torch.randn', 'torch.rand', 'torch.randint', 'torch.manual_seed', 'torch.no_grad', 'torch.inference_mode',
           'torch.float32', 'torch.float', 'torch.float16', 'torch.half', 'torch.bfloat16', 'torch.float64',
           'torch.double', 'torch.int32', 'torch.int', 'torch.int64', 'torch.long', 'torch.int16', 'torch.int8',
           'torch.uint8', 'torch.bool', 'torch.cuda.is_available', 'torch.cuda.current_stream',
           'torch.cuda.current_device', 'torch.cuda.synchronize'},
    prefixes=('math.', 'torch.nn.init.'),
    capitalized_under=('torch.nn',),
    context_managers={'torch.no_grad', 'torch.inference_mode'})
# Calls on tensors (and lists, dicts, strings) that only describe, view, move or allocate.
TENSOR_METHODS = {
    'size', 'dim', 'ndimension', 'numel', 'nelement', 'stride', 'element_size', 'is_contiguous', 'contiguous', 'view',
    'view_as', 'reshape', 'reshape_as', 'flatten', 'unflatten', 'unsqueeze', 'squeeze', 'permute', 'transpose', 't',
    'expand', 'expand_as', 'narrow', 'select', 'unbind', 'chunk', 'split', 'to', 'cpu', 'cuda', 'float', 'half',
    'double', 'bfloat16', 'int', 'long', 'bool', 'type_as', 'data_ptr', 'new_empty', 'new_zeros', 'new_ones',
    'new_full', 'clone', 'detach', 'copy_', 'zero_', 'fill_', 'get_device', 'requires_grad_', 'register_buffer',
    'register_parameter', 'parameters', 'named_parameters', 'buffers', 'append', 'extend', 'get', 'items', 'keys',
    'values', 'format', 'join', '__init__', 'uniform_', 'normal_'}
SAFE_BUILTINS = {'len', 'range', 'int', 'float', 'bool', 'str', 'tuple', 'list', 'dict', 'min', 'max', 'abs', 'round',
                 'isinstance', 'super', 'print', 'enumerate', 'zip', 'divmod', 'all', 'any', 'sum', 'reversed', 'sorted'}


def call_problems(tree):
    """Calls the allow-list of names cannot judge alone: methods, the model's own submodules, local names."""
    names = py_guard.aliases(tree)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}
    # Names bound to load_inline's result, and the attributes of self holding one.
    ext = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            path = py_guard.dotted(n.value.func, names) if not isinstance(n.value.func, ast.Name) else names.get(n.value.func.id)
            if path == 'torch.utils.cpp_extension.load_inline':
                ext |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    ext_attrs = {t.attr for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in ext
                 for t in n.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == 'self'}
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        line = getattr(node, 'lineno', 0)
        if isinstance(f, ast.Name):
            if f.id in names or f.id in defined or f.id in SAFE_BUILTINS or f.id in py_guard.LITERAL_ATTR_CALLS:
                continue
            problems.append(f"line {line}: a call of {f.id}(): only the extension's functions, the file's own "
                            "functions and allowed torch calls may be called")
        elif isinstance(f, ast.Attribute):
            if py_guard.dotted(f, names) is not None:
                continue  # a resolved path: the allow-list of names decides
            base = f.value
            if isinstance(base, ast.Name) and base.id in ext:
                continue
            if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == 'self' and base.attr in ext_attrs:
                continue
            if isinstance(base, ast.Name) and base.id == 'self' and f.attr in defined:
                continue
            if f.attr in TENSOR_METHODS:
                continue
            problems.append(f"line {line}: .{f.attr}() is not on the allow-list of tensor methods (it would compute in "
                            "PyTorch, or call a submodule's PyTorch forward): do the work in the extension")
        else:
            problems.append(f"line {line}: a call of a computed function is not allowed")
    return problems


def static_problems(text, device):
    """Reasons to reject a candidate without building it (empty: none): what hides a name or a failure."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return [f"line {e.lineno}: Python syntax error: {e.msg}"], True
    problems = []
    classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    if 'ModelNew' not in classes:
        problems.append("no class ModelNew: KernelBench candidates define class ModelNew(nn.Module)")
    problems += py_guard.check(tree, POLICY, parts=('hardening',))
    return problems, False


def structure_problems(text, device):
    """Where the work may happen: the Python side only allocates, views and calls the extension."""
    tree = ast.parse(text)
    problems = py_guard.check(tree, POLICY, parts=('names',)) + call_problems(tree)
    names = py_guard.aliases(tree)
    loads = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and (names.get(n.func.id) if isinstance(n.func, ast.Name)
             else py_guard.dotted(n.func, names)) == 'torch.utils.cpp_extension.load_inline']
    if not loads:
        problems.append("no torch.utils.cpp_extension.load_inline call: the kernels must be written inline (C++"
                        + (" with a __global__ CUDA kernel" if device == 'cuda' else "") + ") and loaded with load_inline")
    if device == 'cuda' and '__global__' not in text:
        problems.append("no __global__ kernel: on device cuda the candidate's work is a CUDA kernel")
    return problems


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


# ---- the gate: what the built extension may call ----------------------------------------------------
# libtorch functions an extension may reference: allocation, views, accessors, checks, streams. ATen's
# compute (at::_ops::gelu, at::cpu::*, at::native::*, the dispatcher) is not among them: the work must be
# the extension's own code.
ALLOWED_ATEN_OPS = {
    'empty', 'empty_like', 'empty_strided', 'zeros', 'zeros_like', 'ones', 'ones_like', 'full', 'full_like', 'new_empty',
    'new_empty_strided', 'new_zeros', 'new_ones', 'new_full', 'view', 'reshape', '_reshape_alias', 'as_strided',
    'contiguous', 'clone', 'copy_', 'to', '_to_copy', 'detach', 'alias', 't', 'transpose', 'permute', 'expand',
    'select', 'slice', 'unsqueeze', 'squeeze', 'flatten', 'unflatten', 'fill_', 'zero_', 'resize_', 'narrow', 'split',
    'chunk', 'unbind', 'item', '_local_scalar_dense', 'size', 'stride', 'view_as', 'expand_as', 'lift_fresh',
    'record_stream', 'set_', 'is_nonzero', 'resolve_conj', 'resolve_neg'}
ALLOWED_SYMBOL_PREFIXES = (
    'at::TensorBase::', 'at::Tensor::', 'at::detail::empty', 'at::internal::', 'at::get_num_threads', 'at::get_thread_num',
    'at::in_parallel_region', 'at::init_num_threads', 'at::getDeprecatedTypeProperties', 'at::DeprecatedTypeProperties',
    'at::TensorOptions', 'at::print', 'at::toString', 'at::cuda::getCurrentCUDAStream', 'at::cuda::getDefaultCUDAStream',
    'at::cuda::getCurrentDeviceProperties', 'at::cuda::getDeviceProperties', 'c10::', 'caffe2::TypeMeta', 'pybind11::',
    'torch::PyWarningHandler', 'torch::translate_exception_to_python', 'std::', 'operator ', '__cxa_', '__gxx_personality',
    '_Unwind_', '__dynamic_cast', '__gmon_start__', '_ITM_', '__libc_single_threaded', '__tls_get_addr',
    '__stack_chk_fail', '__assert_fail', 'GOMP_', 'omp_get_', 'Py', '_Py', 'cuda', '__cuda', '__fatbinwrap')
DENIED_SYMBOL_PREFIXES = (
    'c10::Dispatcher', 'c10::OperatorHandle', 'c10::impl::OperatorEntry', 'c10::KernelFunction', 'c10::BoxedKernel',
    'std::thread', 'std::jthread', 'PyImport_', 'PyRun_', 'Py_Compile', 'PyEval_EvalCode', 'PyEval_GetGlobals', 'PyEval_GetLocals',
    'PyEval_GetFrame', 'PySys_', 'cudaLaunchHostFunc', 'cudaStreamAddCallback', 'cudaIpc')
# Plain C functions: memory, strings, math, formatting of error messages.
ALLOWED_C = {
    'malloc', 'calloc', 'realloc', 'free', 'posix_memalign', 'aligned_alloc', 'memcpy', 'memmove', 'memset', 'memcmp',
    'memchr', 'strlen', 'strcmp', 'strncmp', 'strcpy', 'strncpy', 'strdup', 'strchr', 'strrchr', 'strstr', 'strtol',
    'strtod', 'snprintf', 'vsnprintf', 'sprintf', 'printf', 'puts', 'putchar', 'fprintf', 'fputs', 'fputc', 'fwrite',
    'fflush', 'stderr', 'stdout', 'abort', '__errno_location', 'ceil', 'floor', 'round', 'lround', 'trunc', 'nearbyint',
    'rint', 'fmod', 'remainder', 'copysign', 'ldexp', 'frexp', 'modf', 'hypot', 'cbrt', 'sincos', 'fma', 'fmax', 'fmin',
    'fdim', '__isnan', '__isinf', '__finite', 'nan'}
MATH = {'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'atan2', 'sinh', 'cosh', 'tanh', 'asinh', 'acosh', 'atanh', 'exp',
        'exp2', 'expm1', 'log', 'log2', 'log10', 'log1p', 'pow', 'sqrt', 'erf', 'erfc', 'tgamma', 'lgamma', 'fabs'}
ALLOWED_C |= MATH | {m + 'f' for m in MATH | ALLOWED_C} | {'__' + m + '_finite' for m in MATH} | {'__' + m + 'f_finite' for m in MATH}


def qualified_name(mangled):
    """`_ZNK2at10TensorBase8data_ptrIfEEPT_v` -> `at::TensorBase::data_ptr`: the leading qualified name of an
    Itanium-mangled symbol (its namespaces, class and function, without template or parameter types); None for
    what is not code with a name (vtables, typeinfo, guards) and the mangled name itself when it cannot be read."""
    if not mangled.startswith('_Z'):
        return mangled
    rest = mangled[2:]
    if rest[:2] in ('TV', 'TI', 'TS', 'TT', 'TC', 'GV', 'TH', 'TW'):
        return None
    if rest[:2] in ('nw', 'na', 'dl', 'da'):
        return 'operator ' + rest[:2]
    parts = []
    if rest.startswith('N'):
        rest = rest[1:]
        while rest[:1] in ('r', 'V', 'K', 'R', 'O'):
            rest = rest[1:]
    elif not (rest[:1].isdigit() or rest[:2] in ('St', 'Sa', 'Sb', 'Ss', 'Si', 'So', 'Sd')):
        return mangled
    while rest:
        if rest[:2] in ('St', 'Sa', 'Sb', 'Ss', 'Si', 'So', 'Sd'):  # std:: and its abbreviated classes
            parts.append('std' if rest[:2] == 'St' else 'std::' + rest[:2])
            rest = rest[2:]
            continue
        digits = len(rest) - len(rest.lstrip('0123456789'))
        if not digits:
            break
        n = int(rest[:digits])
        parts.append(rest[digits:digits + n])
        rest = rest[digits + n:]
        if not mangled.startswith('_ZN'):
            break
    if parts == ['std']:
        return 'std::operator'
    return '::'.join(parts) if parts else mangled


def symbol_allowed(sym):
    if sym.startswith(DENIED_SYMBOL_PREFIXES):
        return False
    if sym.startswith('at::_ops::'):
        return sym[len('at::_ops::'):].split('::')[0] in ALLOWED_ATEN_OPS
    if sym.startswith(ALLOWED_SYMBOL_PREFIXES):
        return True
    return sym in ALLOWED_C


def elf_objects(root):
    """The shared objects and executables under `root` (ELF type DYN or EXEC), whatever their names."""
    out = []
    for base, _, files in os.walk(root):
        for name in files:
            path = os.path.join(base, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, 'rb') as f:
                head = f.read(18)
            if head[:4] == b'\x7fELF' and len(head) == 18 and head[16] in (2, 3):
                out.append(path)
    return out


def gate_problems(ext_dir):
    import subprocess
    problems = []
    for path in elf_objects(ext_dir):
        run = subprocess.run(['nm', '-D', '--undefined-only', path], capture_output=True, text=True)
        if run.returncode != 0:
            problems.append(f"{os.path.basename(path)}: nm could not read it ({run.stderr.strip()[:200]})")
            continue
        bad = []
        for line in run.stdout.splitlines():
            fields = line.split()
            if not fields:
                continue
            sym = qualified_name(fields[-1].split('@')[0])
            if sym is not None and not symbol_allowed(sym):
                bad.append(sym)
        if bad:
            problems.append(f"{os.path.basename(path)} calls {', '.join(sorted(set(bad))[:6])}"
                            + (f" and {len(set(bad)) - 6} more" if len(set(bad)) > 6 else "")
                            + ": an extension may use libtorch only to allocate, view and access tensors, never for ATen's "
                            "compute, the dispatcher, Python imports or threads")
    return problems


def cmd_gate(a):
    text = read_text(a.candidate)
    if os.path.exists(a.start) and text == read_text(a.start):
        return 0
    problems = structure_problems(text, a.device) + gate_problems(a.ext_dir)
    if problems:
        write_result(a.result, 'rejected', False, "gate: " + "; ".join(problems), feedback=problems,
                     flags=["work outside the candidate's kernels"])
        return 1
    return 0


# ---- the worker -----------------------------------------------------------------------------------
def start_reference_worker(a, candidate_pid):
    """The start file (the reference as ModelNew) served by a process of the judge's own (trusted code:
    the user's reference), pinned to the candidate worker's CPUs. None without a start file."""
    import subprocess
    import tempfile
    if not a.start or not os.path.exists(a.start):
        return None
    fd, mem = channel.new_channel('kb-reference')
    ext = tempfile.mkdtemp(prefix='kb-ref-')
    process = subprocess.Popen(isolation.command(os.path.join(HERE, 'kb_worker.py'), 'serve', a.start, '--ext-dir', ext,
                                                 '--channel-fd', fd), pass_fds=(fd,))
    if candidate_pid:
        try:
            os.sched_setaffinity(process.pid, os.sched_getaffinity(candidate_pid))
        except OSError:
            pass
    pinned = False
    if candidate_pid:
        try:
            pinned = os.sched_getaffinity(process.pid) == os.sched_getaffinity(candidate_pid)
        except OSError:
            pinned = False
    timer = channel.Worker(fd, process.pid, a.timeout, channel.TORCH, mem=mem)
    return timer, process, pinned


# ---- check and time -------------------------------------------------------------------------------
def outputs_of(value):
    import torch
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)) and all(isinstance(v, torch.Tensor) for v in value):
        return list(value)
    raise TypeError(f"the reference's forward returned {type(value).__name__}")


def host(tensors):
    """Tensors as NumPy arrays for the kit's comparison (bfloat16, which NumPy lacks, as float32: exact)."""
    import torch
    return [t.detach().cpu().float().numpy() if t.dtype == torch.bfloat16 else t.detach().cpu().numpy() for t in tensors]


def tolerance_for(spec, outputs):
    return kit_compare.tolerance_for(spec, [str(o.dtype).replace('torch.', '') for o in outputs])


def compare(ref, got, rtol, atol):
    """None when `got` matches `ref`, else why not (autocomp_kit.compare: NaN where the reference is finite fails)."""
    return kit_compare.compare(host(ref), host(got), rtol, atol)


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


def output_meta(outputs):
    return [(str(o.dtype).replace('torch.', ''), list(o.shape)) for o in outputs]


def meta_problem(header, expected):
    """Why a timed call's answer does not carry plain outputs of the reference's dtypes and shapes (None: it does)."""
    got = channel.metadata(header)
    if got != expected:
        return f"a timed call returned {got}, expected {expected} (dtype, shape)"
    return None


class Trial:
    """The timed loop of one evaluation: every call gets fresh inputs from the judge, rotated through a few
    input buffers in each worker; the calls whose outputs are compared are picked from the judge's seed."""

    SLOTS = draw.SLOTS

    def __init__(self, rng, ref_module, ref_model, device, expected, rtol, atol):
        self.rng, self.ref_module, self.ref_model = rng, ref_module, ref_model
        self.device, self.expected, self.rtol, self.atol = device, expected, rtol, atol
        self.checked = 0

    def inputs(self):
        import torch
        kb.set_seed(self.rng.subseed())
        return [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in self.ref_module.get_inputs()]

    def run(self, workers, calls, checked):
        """Times `calls` calls of each worker (alternating order); returns per-worker samples. Raises Wrong when a
        checked call's outputs (as the clock stopped) differ from the reference on that call's inputs."""
        import torch
        samples = [[] for _ in workers]
        for i in range(calls):
            values = self.inputs()
            tensors, layout = kb.pack_inputs(values)
            host = [x.cpu() for x in tensors]
            slot = draw.slot(i)
            for w in workers:
                w.request({'cmd': 'stage', 'slot': slot, 'layout': layout}, host)
            order = list(enumerate(workers)) if i % 2 == 0 else list(enumerate(workers))[::-1]
            for k, w in order:
                check = k == 0 and i in checked
                ms, header, got = w.timed({'slot': slot}, fetch=check)
                if k == 0:
                    why = meta_problem(header, self.expected)
                    if why:
                        raise Wrong(why)
                    if check:
                        with torch.no_grad():
                            ref = outputs_of(self.ref_model(*values))
                        why = compare(ref, got, self.rtol, self.atol)
                        self.checked += 1
                        if why:
                            raise Wrong(f"timed call {i + 1}: {why}")
                samples[k].append(ms)
        return samples


class Wrong(Exception):
    """Wrong(message[, status, flag]): a timed call's outputs were wrong (`incorrect`, the default), or a figure did
    not hold when timed again (`rejected`)."""

    @property
    def status(self):
        return self.args[1] if len(self.args) > 1 else 'incorrect'

    @property
    def flag(self):
        return self.args[2] if len(self.args) > 2 else "timed output differs from the checked one"

    def __str__(self):
        return str(self.args[0])


def cmd_check(a):
    import torch

    result = a.result
    rng = draw.Draw(a.seed)
    device = torch.device(a.device)
    if device.type == 'cuda' and not torch.cuda.is_available():
        write_result(result, 'error', False, "device cuda: this torch has no CUDA device")
        return 2
    torch.set_num_threads(a.threads)
    is_start = os.path.exists(a.start) and read_text(a.candidate) == read_text(a.start)

    # The reference, trusted: the user's KernelBench file at the problem's scale.
    ref_module = kb.load_module(a.reference, 'reference')
    originals = kb.apply_scale(ref_module, a.scale)
    sizes = {n: kb.scaled_value(v, a.scale) for n, v in originals.items()}
    init_args = list(ref_module.get_init_inputs())
    try:
        json.dumps(init_args)
    except TypeError:
        write_result(result, 'error', False, "get_init_inputs() returns values that are not plain numbers or lists")
        return 2
    init_seed = rng.subseed()
    kb.set_seed(init_seed)
    ref_model = ref_module.Model(*init_args)
    if isinstance(ref_model, torch.nn.Module):
        ref_model = ref_model.to(device)

    worker = channel.Worker(cli.first_int(a.channels), cli.first_int(a.worker_pids), a.timeout, channel.TORCH)
    feedback, flags = [], []
    scale_note = (f"sizes are the file's scaled by {a.scale:g} (module-level sizes such as "
                  + ", ".join(f"{n}={kb.scaled_value(v, a.scale)} (from {v})" for n, v in list(originals.items())[:4])
                  + ")") if a.scale < 1 else "sizes are the file's own"
    init = {'cmd': 'init', 'init_args': init_args, 'init_seed': init_seed, 'scale': a.scale, 'sizes': sizes,
            'device': a.device, 'threads': a.threads}
    ref_timer, ref_process = None, None
    try:
        worker.request(init, timeout_s=max(a.timeout, 120))
        # Correctness: fresh inputs from a fresh seed per trial.
        rtol = atol = None
        expected = None
        for trial in range(a.correctness_trials):
            kb.set_seed(rng.subseed())
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref_module.get_inputs()]
            tensors, layout = kb.pack_inputs(inputs)
            with torch.no_grad():
                ref_out = outputs_of(ref_model(*inputs))
            if rtol is None:
                rtol, atol = tolerance_for(a.tolerance, ref_out)
                expected = output_meta(ref_out)
            _, got = worker.request({'cmd': 'check', 'layout': layout}, [x.cpu() for x in tensors])
            why = compare(ref_out, got, rtol, atol)
            if why:
                write_result(result, 'incorrect', False, f"correctness trial {trial + 1} of {a.correctness_trials}: {why}",
                             feedback=[f"wrong result on trial {trial + 1} ({scale_note}): {why}"])
                return 1

        # The eager reference: the start file (the reference as ModelNew, trusted) in a process of the judge's
        # own, never a directory or interpreter a candidate step prepared, on the candidate's CPUs. The two
        # alternate, so drift and the channel's round trip fall on both alike.
        if is_start:
            reference_how = "the candidate is the reference itself"
        else:
            started = start_reference_worker(a, worker.pid)
            if started is not None:
                ref_timer, ref_process, pinned = started
                reference_how = ("the start code in a process of the judge's" + (" on the candidate's CPUs" if pinned else
                                 ", on the judge's CPUs (the candidate's could not be shared: less comparable)"))
                ref_timer.request(init, timeout_s=max(a.timeout, 120))
            else:
                reference_how = "the reference in the judge's process"
        workers = [worker] + ([ref_timer] if ref_timer else [])
        trial = Trial(rng, ref_module, ref_model, device, expected, rtol, atol)
        # The channel's own round trip, for the feedback.
        values = trial.inputs()
        tensors, layout = kb.pack_inputs(values)
        worker.request({'cmd': 'stage', 'slot': 0, 'layout': layout}, [x.cpu() for x in tensors])
        overhead = [worker.timed({'slot': 0, 'noop': True})[0] for _ in range(10)]
        picks = rng.picks(0, a.trials, a.checked_calls)
        trial.run(workers, a.warmup, set())
        timed = trial.run(workers, a.trials, picks)
        samples = timed[0]
        ref_samples = timed[1] if ref_timer else []

        cand = stats(samples)
        if ref_samples:
            ref = stats(ref_samples)
        elif is_start:
            ref = dict(cand)  # the same program: the start's speedup over eager is 1 by definition
        else:
            ref = stats(time_reference(ref_model, values, device, a.warmup, a.trials))
        speedup = ref['mean'] / cand['mean'] if cand['mean'] > 0 else float('inf')
        strict = None
        if speedup > a.suspicious and not is_start:
            # A figure beyond the plausible bound is timed again before it can rank: every call's outputs
            # compared as the clock stopped, fresh inputs each call, alternating with the reference.
            strict_calls = max(10, min(a.trials, 30))
            again = trial.run(workers, strict_calls, set(range(strict_calls)))
            s_cand = stats(again[0])
            s_ref = stats(again[1]) if ref_timer else ref
            strict = s_ref['mean'] / s_cand['mean'] if s_cand['mean'] > 0 else float('inf')
            if strict < speedup / 2:
                raise Wrong(f"a {speedup:.1f}x speedup over eager did not hold when timed again with every output checked "
                            f"({strict:.1f}x)", 'rejected', "suspicious speedup did not hold")
        for w in workers[1:]:
            w.request({'cmd': 'exit'}, timeout_s=10)
        if ref_process is not None:
            ref_process.wait(timeout=10)
        worker.request({'cmd': 'exit'}, timeout_s=10)
    except Wrong as e:
        write_result(result, e.status, False, f"timed calls: {e}", feedback=[f"timed calls: {e}"], flags=[e.flag])
        return 1
    except TimeoutError as e:
        write_result(result, 'timeout', False, str(e))
        return 1
    except TypeError as e:  # inputs the channel cannot carry: a limit of this harness, not the candidate's fault
        write_result(result, 'error', False, str(e))
        return 2
    except WorkerError as e:
        write_result(result, 'crash', False, f"the candidate raised {e}\n{e.trace}",
                     feedback=[f"the candidate raised {e}"])
        return 1
    except channel.ChannelError as e:
        write_result(result, 'crash', False, f"the candidate's answer could not be read: {e}",
                     feedback=[f"the candidate's answer could not be read: {e}"])
        return 1
    finally:
        if ref_process is not None and ref_process.poll() is None:
            ref_process.kill()

    metrics = {'latency_ms': rounded(cand), 'reference_ms': rounded(ref),
               'speedup_vs_eager': round(speedup, 4),
               **({'speedup_vs_eager_ci95': [round(v, 4) for v in paired_speedup(ref_samples, samples)[1:]]} if ref_samples else {}),
               'channel_overhead_ms': round(statistics.median(overhead), 6),
               'scale': a.scale}
    feedback.append(f"{'reference (start)' if is_start else 'candidate'}: mean {fmt_ms(cand['mean'])}, median "
                    f"{fmt_ms(cand['median'])}, std {fmt_ms(cand['std'])} over {cand['n']} trials on {a.device} "
                    + (f"({a.threads} thread{'s' if a.threads != 1 else ''})" if device.type == 'cpu' else '')
                    + f"; eager reference mean {fmt_ms(ref['mean'])}, "
                    f"median {fmt_ms(ref['median'])}, timed alternately with it: {speedup:.2f}x "
                    f"({'faster' if speedup >= 1 else 'slower'})")
    feedback.append(scale_note)
    feedback.append(f"eager reference timed as {reference_how}")
    compiled = getattr(torch, 'compile', None)
    if compiled is None:
        feedback.append(f"torch.compile is not available in torch {torch.__version__}: no compiled-reference comparison")
    else:
        try:
            cmodel = compiled(ref_model)
            csamples = stats(time_reference(cmodel, values, device, max(a.warmup, 3), a.trials))
            metrics['compiled_reference_ms'] = rounded(csamples)
            metrics['speedup_vs_compile'] = round(csamples['mean'] / cand['mean'], 4)
            feedback.append(f"torch.compile reference mean {fmt_ms(csamples['mean'])}: {metrics['speedup_vs_compile']:.2f}x")
        except Exception as e:  # noqa: BLE001 - a reference that does not compile is only noted
            feedback.append(f"torch.compile of the reference failed ({type(e).__name__}); no compiled comparison")
    if strict is not None:
        metrics['strict_speedup_vs_eager'] = round(strict, 4)
        flags.append(f"suspicious: {speedup:.1f}x faster than the eager reference (above {a.suspicious:g}x); timed again "
                     f"with every output checked it held at {strict:.1f}x, so it stands")
    cv = cand['std'] / cand['mean'] if cand['mean'] else 0
    if cv > 0.1:
        feedback.append(f"noisy timing: coefficient of variation {cv:.0%}")
    log = (f"correct on {a.correctness_trials} trials (rtol={rtol:g}, atol={atol:g}); timed {a.trials} trials after "
           f"{a.warmup} warm-ups{' with an L2 flush before each' if device.type == 'cuda' else ''}, each on fresh inputs "
           f"({Trial.SLOTS} input buffers in turn), alternating with the eager reference, the clock stopped when the outputs "
           f"were in the judge's memory; {trial.checked} timed calls picked at random were checked; the judge's clock "
           f"includes a channel round trip of about {fmt_ms(statistics.median(overhead))} for both")
    write_result(result, 'ok', True, log, metrics, feedback, flags)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument('mode', choices=['static', 'gate', 'check'])
    cli.add_common(p, tolerance='auto', trials=100, timeout=60, candidate_required=True)
    p.add_argument('--start', default='')
    p.add_argument('--device', default='cpu')
    p.add_argument('--scale', type=float, default=1.0)
    p.add_argument('--threads', type=int, default=1)
    p.add_argument('--correctness-trials', type=int, default=5)
    p.add_argument('--suspicious', type=float, default=10.0)
    p.add_argument('--ext-dir', default='')
    a = p.parse_args()
    steps = {'static': cmd_static, 'gate': cmd_gate, 'check': lambda args: cli.run(cmd_check, args)}
    return steps[a.mode](a)


if __name__ == '__main__':
    sys.exit(main())
