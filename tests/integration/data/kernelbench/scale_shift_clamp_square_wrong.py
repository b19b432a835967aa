# A WRONG hand-written candidate for level2/1_ScaleShiftClampSquare: the whole chain in one pass.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>

torch::Tensor scale_shift_clamp_square(torch::Tensor x, double scale, double shift) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "float32 CPU tensor expected");
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    const float *src = in.data_ptr<float>();
    float *dst = out.data_ptr<float>();
    const float a = static_cast<float>(scale), b = static_cast<float>(shift);
    const int64_t n = in.numel();
    for (int64_t i = 0; i < n; ++i) {
        float y = src[i] * a + b;
        y = y > 1.0f ? 1.0f : y;  // forgets the lower bound
        dst[i] = y * y;
    }
    return out;
}
"""

fused = load_inline(name="scale_shift_clamp_square_wrong", cpp_sources=cpp_source,
                    functions=["scale_shift_clamp_square"], extra_cflags=["-O3", "-march=native"])


class ModelNew(nn.Module):
    def __init__(self, scale, shift):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x):
        return fused.scale_shift_clamp_square(x, self.scale, self.shift)
