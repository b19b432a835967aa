# A candidate that falls back to PyTorch when its kernel fails: rejected before it is built.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class ModelNew(nn.Module):
    def __init__(self, scale, shift):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x):
        try:
            ext = load_inline(name="never", cpp_sources="int f() { return 0; }", functions=["f"])
            return ext.f(x)
        except Exception:
            return torch.clamp(x * self.scale + self.shift, -1.0, 1.0) ** 2
