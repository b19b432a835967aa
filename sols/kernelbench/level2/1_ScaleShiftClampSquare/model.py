import torch
import torch.nn as nn


class Model(nn.Module):
    """An elementwise chain: scale and shift, clamp to [-1, 1], then square."""

    def __init__(self, scale, shift):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x):
        y = x * self.scale + self.shift
        y = torch.clamp(y, -1.0, 1.0)
        return y * y


batch_size = 8192
dim = 8192
scale = 1.5
shift = 0.25


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [scale, shift]
