# A hand-written candidate for level1/1_NewGELU: one pass, the tanh approximation per element.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor new_gelu(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "float32 CPU tensor expected");
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    const float *src = in.data_ptr<float>();
    float *dst = out.data_ptr<float>();
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    const int64_t n = in.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = src[i];
        dst[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
    }
    return out;
}
"""

ext = load_inline(name="new_gelu", cpp_sources=cpp_source, functions=["new_gelu"], extra_cflags=["-O3", "-march=native"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.new_gelu(x)
