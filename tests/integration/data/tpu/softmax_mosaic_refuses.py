# Rows of 3 per block: Pallas' interpreter runs it, Mosaic refuses it (a block's second-to-last dimension must be
# a multiple of 8 or the whole array's).
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def softmax_kernel(x_ref, o_ref):
    x = x_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    o_ref[...] = e / jnp.sum(e, axis=-1, keepdims=True)


def solution(x):
    rows, cols = x.shape
    block = (3, cols)
    return pl.pallas_call(softmax_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(pl.cdiv(rows, 3),),
                          in_specs=[pl.BlockSpec(block, lambda i: (i, 0))],
                          out_specs=pl.BlockSpec(block, lambda i: (i, 0)))(x)
