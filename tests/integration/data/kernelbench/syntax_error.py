# Not Python: the static check reports the line.
import torch
class ModelNew(torch.nn.Module)
    def forward(self, x):
        return x
