"""Static checks of an NKI candidate (stdlib ast only; the judge's `static` step).

A candidate is a Python module defining `solution`, decorated with `@nki.jit`, that builds its
result with nki.language / nki.isa. It may import only the NKI modules, numpy and math; it may not
touch files, processes, the interpreter or the timing harness, catch exceptions (a fallback hides a
failure), or call the host-side runners (baremetal, benchmark, simulate, profile) itself.
"""
import ast

ALLOWED_IMPORTS = {"neuronxcc", "neuronxcc.nki", "neuronxcc.nki.language", "neuronxcc.nki.isa", "neuronxcc.nki.typing",
                   "neuronxcc.nki.compiler", "numpy", "math", "functools"}
FORBIDDEN_NAMES = {"open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "getattr", "setattr", "delattr",
                   "breakpoint", "os", "sys", "subprocess", "ctypes", "time", "importlib", "builtins", "socket", "threading",
                   "multiprocessing", "signal", "pickle", "shutil", "pathlib", "inspect", "gc"}
FORBIDDEN_ATTRIBUTES = {"baremetal", "benchmark", "simulate_kernel", "profile", "__globals__", "__code__", "__builtins__",
                        "__subclasses__", "__dict__", "__class__", "__bases__", "__mro__"}


_CONSTANT_NODES = (ast.Constant, ast.Name, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.Load, ast.operator, ast.unaryop)


def _is_nki_jit(decorator):
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(node, ast.Attribute) and node.attr == "jit" or isinstance(node, ast.Name) and node.id == "jit"


def static_problems(source, entry="solution"):
    try:
        tree = ast.parse(source, filename="candidate.py")
    except SyntaxError as e:
        return [f"candidate.py:{e.lineno}: syntax error: {e.msg}"]
    problems = []

    def at(node, text):
        problems.append(f"candidate.py:{getattr(node, 'lineno', 0)}: {text}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED_IMPORTS:
                    at(node, f"import of '{alias.name}' (allowed: {', '.join(sorted(ALLOWED_IMPORTS))})")
        elif isinstance(node, ast.ImportFrom):
            if node.level or node.module not in ALLOWED_IMPORTS:
                at(node, f"import from '{node.module}' (allowed: {', '.join(sorted(ALLOWED_IMPORTS))})")
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            at(node, "try/except: a kernel that fails must fail visibly, not fall back")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            at(node, f"'{node.id}': kernels do not reach the interpreter, files or processes")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            at(node, f"'.{node.attr}': the judge runs, times and profiles the kernel; the candidate only defines it")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            at(node, "global/nonlocal state: each call must compute from its inputs alone")
    entries = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry]
    if not entries:
        problems.append(f"candidate.py: no top-level 'def {entry}(...)'")
    elif not any(_is_nki_jit(d) for d in entries[-1].decorator_list):
        at(entries[-1], f"'{entry}' is not decorated with @nki.jit")
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and all(
                isinstance(n, _CONSTANT_NODES) for n in ast.walk(node.value)):
            continue  # module-level constants
        at(node, "module-level code other than imports, constants and function definitions")
    return problems
