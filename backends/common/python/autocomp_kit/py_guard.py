"""Static checks of a Python candidate on its resolved AST (trusted; the kit's guard, used by the kernelbench and
tpu judges; a judge passes its target's Policy).

Every name a candidate reaches through an import is resolved to its full dotted path (`nn.Module` is
`torch.nn.Module`, `pl.pallas_call` is `jax.experimental.pallas.pallas_call`) and must be on the
target's allow-list. Whatever lets a file reach a name the checker cannot see is refused outright:
attribute access by a computed name (getattr/setattr/hasattr with anything but a plain literal),
dunder and private names, `**{...}` keyword arguments with computed keys, exec/eval/compile/__import__,
globals/locals/vars, module objects used as values, `with` blocks other than the allowed ones (so no
contextlib.suppress), try/except, global/nonlocal, and imports outside the allow-list (so no sys,
importlib, typing.sys, os). The checks refuse what they do not know; they never list what is bad.
"""
import ast

FORBIDDEN_NAMES = {'exec', 'eval', 'compile', '__import__', 'globals', 'locals', 'vars', 'breakpoint', 'input', 'open',
                   'setattr', 'delattr', 'memoryview', 'dir', 'type', 'object', 'classmethod', 'staticmethod'}
# Attribute names that reach interpreter state, frames or files whatever the object is.
FORBIDDEN_ATTRIBUTES = {'modules', 'f_globals', 'f_locals', 'f_back', 'f_builtins', 'gi_frame', 'cr_frame', 'tb_frame',
                        'tb_next', 'co_code', 'tofile', 'fromfile', 'memmap', 'environ', 'system', 'stdout', 'stderr'}
LITERAL_ATTR_CALLS = {'getattr', 'hasattr'}


class Policy:
    """What a target allows: `imports` (top-level modules), `paths` (exact dotted names), `prefixes` (a
    dotted name starting with one of these is allowed unless one of its parts is in `denied_parts`),
    `context_managers` (dotted names a `with` may call),
    `capitalized_under` (modules whose classes are allowed), `modules` (dotted names that are modules:
    they may be imported and named as the start of a path, never used as values)."""

    def __init__(self, imports, paths=(), prefixes=(), denied_parts=(), context_managers=(),
                 capitalized_under=(), modules=()):
        self.imports = set(imports)
        self.modules = set(imports) | set(modules)
        self.paths = set(paths)
        self.prefixes = tuple(prefixes)
        self.denied_parts = set(denied_parts)
        self.context_managers = set(context_managers)
        self.capitalized_under = tuple(capitalized_under)

    def allows(self, path):
        parts = path.split('.')
        if any(p in self.denied_parts or (p.startswith('_') and p != '__future__') for p in parts[1:]):
            return False
        if path in self.paths or any(path.startswith(p) for p in self.prefixes):
            return True
        # A class directly under one of these modules (torch.nn.Linear: a module that holds parameters).
        return any(path.startswith(m + '.') and '.' not in path[len(m) + 1:] and path[len(m) + 1:][:1].isupper()
                   for m in self.capitalized_under)


def aliases(tree):
    """Names bound by imports anywhere in the file -> the dotted path they stand for."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    top = a.name.split('.')[0]
                    out[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def dotted(node, names):
    """The full path of `a.b.c` when `a` is an imported name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in names:
        return '.'.join([names[node.id]] + list(reversed(parts)))
    return None


def check(tree, policy, parts=('hardening', 'names')):
    """Reasons to refuse the file (a list of 'line N: ...' strings; empty when it passes). `parts`: 'hardening'
    (what hides a name or swallows a failure: computed attributes, dunders, exec, try, with, **{...}) and
    'names' (imports and every resolved name on the policy's allow-list)."""
    names = aliases(tree)
    problems = []

    def refuse(node, why, part='hardening'):
        if part in parts:
            problems.append(f"line {getattr(node, 'lineno', 0)}: {why}")

    # The outermost attribute chains rooted at an imported name, and the names used as their roots.
    chain_roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            inner = node.value
            while isinstance(inner, ast.Attribute):
                chain_roots.add(id(inner))
                inner = inner.value
            if isinstance(inner, ast.Name):
                chain_roots.add(id(inner))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split('.')[0] not in policy.imports:
                    refuse(node, f"import {a.name} is not allowed (allowed: {', '.join(sorted(policy.imports - {'__future__'}))})", 'names')
        elif isinstance(node, ast.ImportFrom):
            if node.level or (node.module or '').split('.')[0] not in policy.imports:
                refuse(node, f"from {'.' * node.level}{node.module or ''} import is not allowed", 'names')
            for a in node.names:
                if a.name == '*':
                    refuse(node, "import * is not allowed")
                elif node.module and node.module != '__future__' and not policy.allows(f"{node.module}.{a.name}") \
                        and f"{node.module}.{a.name}" not in policy.modules:
                    refuse(node, f"{node.module}.{a.name} is not on this target's allow-list", 'names')
        elif isinstance(node, (ast.Try, getattr(ast, 'TryStar', ast.Try))):
            refuse(node, "try/except is not allowed (it is how a kernel hides a failure or falls back to the library)")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            refuse(node, "global state is not allowed (global/nonlocal: outputs may not be kept across calls)")
        elif isinstance(node, ast.Attribute) and id(node) not in chain_roots:
            path = dotted(node, names)
            if path is not None and not policy.allows(path) and path not in policy.modules:
                refuse(node, f"{path} is not on this target's allow-list", 'names')
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) and dotted(node, names) is not None:
            refuse(node, f"assigning {dotted(node, names)} is not allowed (a module's names are not the candidate's to replace)")
        if isinstance(node, ast.Attribute):
            if node.attr == '__init__':
                pass
            elif node.attr.startswith('__'):
                refuse(node, f".{node.attr} is not allowed (interpreter internals)")
            elif node.attr.startswith('_') and not (isinstance(node.value, ast.Name) and node.value.id == 'self'):
                refuse(node, f".{node.attr} is not allowed (a private name)")
            elif node.attr in FORBIDDEN_ATTRIBUTES:
                refuse(node, f".{node.attr} is not allowed (interpreter state, frames or files)")
        elif isinstance(node, ast.Name):
            if node.id.startswith('__') and node.id.endswith('__') and node.id != '__name__':
                refuse(node, f"{node.id} is not allowed (interpreter internals)")
            elif node.id in FORBIDDEN_NAMES and node.id not in names:
                refuse(node, f"{node.id} is not allowed")
            elif node.id in names and id(node) not in chain_roots and names[node.id] in policy.modules:
                refuse(node, f"the module {node.id} used as a value (only its allowed names may be used)", 'names')
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in LITERAL_ATTR_CALLS:
                literal = len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                    and not node.args[1].value.startswith('_')
                if not literal:
                    refuse(node, f"{node.func.id}() with a computed or private name is not allowed (write the attribute out)")
                else:
                    base = dotted(node.args[0], names) if node.args else None
                    if base is not None and not policy.allows(f"{base}.{node.args[1].value}"):
                        refuse(node, f"{base}.{node.args[1].value} is not on this target's allow-list", 'names')
            for kw in node.keywords:
                if kw.arg is None and not (isinstance(kw.value, ast.Dict) and all(
                        isinstance(k, ast.Constant) and isinstance(k.value, str) for k in kw.value.keys)):
                    refuse(node, "**keyword arguments with computed names are not allowed (write each keyword out)")
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                call = item.context_expr
                path = dotted(call.func, names) if isinstance(call, ast.Call) else None
                if path not in policy.context_managers:
                    refuse(node, "this with-block is not allowed (only " + (', '.join(sorted(policy.context_managers)) or 'none')
                           + "): a context manager can swallow exceptions")
    seen, unique = set(), []
    for p in problems:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique

