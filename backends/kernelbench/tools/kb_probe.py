"""Exits 0 when the kernelbench target can run on --device here; else prints why (one line) and exits 1."""
import argparse
import sys

p = argparse.ArgumentParser()
p.add_argument('--device', default='cpu')
a = p.parse_args()
try:
    import torch
except Exception as e:  # noqa: BLE001
    print(f"python3 cannot import torch ({type(e).__name__}: {e}); install python3-torch (Debian) or torch from PyPI")
    sys.exit(1)
try:
    import torch.utils.cpp_extension  # noqa: F401 - load_inline
except Exception as e:  # noqa: BLE001
    # Debian's python3-torch does not pull in setuptools, which cpp_extension imports.
    hint = "install python3-setuptools" if "setuptools" in str(e) else "its C++ extension support is incomplete"
    print(f"torch {torch.__version__} cannot compile candidates: torch.utils.cpp_extension does not import "
          f"({type(e).__name__}: {e}); {hint}")
    sys.exit(1)
if a.device == 'cpu':
    sys.exit(0)
if a.device == 'cuda':
    if not torch.cuda.is_available():
        why = "this torch is built without CUDA" if torch.version.cuda is None else "torch finds no CUDA device"
        print(f"device cuda: {why} (torch {torch.__version__})")
        sys.exit(1)
    sys.exit(0)
print(f"unknown device '{a.device}' (cpu or cuda)")
sys.exit(1)
