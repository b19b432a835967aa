"""Python workers that a candidate's other steps cannot reach.

A worker runs `python -I` (isolated.command): no user site-packages and so no usercustomize, no PYTHON*
environment variables, and neither the script's directory nor the working directory on sys.path. -I is
used in place of -I -S because the interpreters' packages (Debian's dist-packages, a venv's site-packages)
come through the site module; site-packages is read-only in the sandbox, which refuse() checks anyway.
A worker calls refuse_unsafe() before importing anything of the candidate's: it will not serve in an
interpreter that is not isolated, has user site-packages, imported a usercustomize/sitecustomize from a
writable directory, or has a writable directory on its import path.
"""
import os
import sys


def command(script, *args, python=None):
    """The command line of an isolated Python worker: [python, -I, script, args...]."""
    return [python or sys.executable, '-I', script, *map(str, args)]


def dac_override():
    """Whether this process may write past file permissions (CAP_DAC_OVERRIDE in its effective set): then every
    directory reads as writable, and writability says nothing."""
    try:
        with open('/proc/self/status') as f:
            caps = next((line.split()[1] for line in f if line.startswith('CapEff:')), '0')
        return bool(int(caps, 16) & (1 << 1))
    except (OSError, ValueError):
        return False


def problems():
    """What makes this interpreter unsafe for a worker (empty: nothing)."""
    import site
    found = []
    if not sys.flags.isolated or site.ENABLE_USER_SITE:
        found.append("the worker's Python is not isolated (run it with -I)")
    check_writable = not dac_override()
    for name in ('usercustomize', 'sitecustomize'):
        module = sys.modules.get(name)
        where = getattr(module, '__file__', None) or ''
        if name == 'usercustomize' and module is not None:
            found.append("a usercustomize module was imported")
        elif module is not None and check_writable and where and os.access(os.path.dirname(where), os.W_OK):
            found.append(f"a sitecustomize module was imported from a writable directory ({os.path.dirname(where)})")
    if check_writable:
        found += [f"{p} on the import path is writable" for p in sys.path if p and os.path.isdir(p) and os.access(p, os.W_OK)]
    return found


def refuse_unsafe():
    """Raises RuntimeError naming every problem when this interpreter is unsafe for a worker."""
    found = problems()
    if found:
        raise RuntimeError("unsafe worker: " + "; ".join(found))
