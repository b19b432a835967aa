"""The tpu target's checks; each exits 0 when satisfied, else prints why (one line) and exits 1.

  tpu_probe.py tools      this Python imports jax with Pallas and its TPU dialect, and flatbuffers, which
                          jax.export's serialization needs (the judge inspects the exported program)
                          (available_check)
  tpu_probe.py hardware   JAX sees a TPU here (hardware_check): only then are kernels timed
"""
import os
import sys

SETUP = "run setup-python-env.sh tpu (jax from PyPI; packaging/ in a source tree, share/autocomp-workbench/ when installed), or point AUTOCOMP_TPU_PYTHON at a Python that has jax"

if len(sys.argv) != 2 or sys.argv[1] not in ('tools', 'hardware'):
    print("usage: tpu_probe.py tools|hardware")
    sys.exit(2)
try:
    import jax
    from jax.experimental import pallas  # noqa: F401
    from jax.experimental.pallas import tpu  # noqa: F401
except Exception as e:  # noqa: BLE001 - any failure to import is the answer
    print(f"{sys.executable} cannot import jax with Pallas ({type(e).__name__}: {e}); {SETUP}")
    sys.exit(1)
try:
    import flatbuffers  # noqa: F401
except ImportError:
    print(f"{sys.executable} has jax but not flatbuffers, which jax.export needs to hand the judge the program; {SETUP} "
          "again (an environment made before it was needed is brought up to date)")
    sys.exit(1)
if sys.argv[1] == 'tools':
    sys.exit(0)
try:
    devices = jax.devices()
except RuntimeError as e:
    print(f"JAX finds no usable device ({e})")
    sys.exit(1)
if devices and devices[0].platform == 'tpu':
    sys.exit(0)
kinds = sorted({d.platform for d in devices})
libtpu = "libtpu is not installed (a TPU VM needs jax[tpu]: packaging/setup-python-env.sh tpu --tpu-runtime)"
try:
    import importlib.util
    if importlib.util.find_spec('libtpu') is not None:
        libtpu = "libtpu is installed but finds no TPU"
except (ImportError, ValueError):
    pass
print(f"no TPU: JAX {jax.__version__} sees only {', '.join(kinds)} devices; {libtpu}"
      + ("" if 'JAX_PLATFORMS' not in os.environ else f" (JAX_PLATFORMS={os.environ['JAX_PLATFORMS']})"))
sys.exit(1)
