import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer, ReLU, then a constant factor."""

    def __init__(self, in_features, out_features, factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.factor = factor

    def forward(self, x):
        return torch.relu(self.linear(x)) * self.factor


batch_size = 1024
in_features = 8192
out_features = 8192
factor = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, factor]
