import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """GELU with the tanh approximation (as in GPT-2), written out as separate tensor operations."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
        return 0.5 * x * (1.0 + torch.tanh(inner))


batch_size = 4096
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
