# A kernel that raises at its first call (while tracing): a crash, reported with its traceback once.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def softmax_kernel(x_ref, o_ref):
    x = x_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    o_ref[...] = e / jnp.sum(e, axis=-1, keepdims=True)


def solution(x):
    if x.shape[0] > 0:
        raise ValueError("first-call-marker: this kernel has no plan for these shapes")
    return pl.pallas_call(softmax_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
