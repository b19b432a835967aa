# A candidate that compiles an extension but still calls PyTorch for every operation: a fallback.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

unused = load_inline(name="unused_helper", cpp_sources="int helper() { return 1; }", functions=["helper"])


class ModelNew(nn.Module):
    def __init__(self, scale, shift):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x):
        y = x * self.scale + self.shift
        y = torch.clamp(y, -1.0, 1.0)
        return y * y
