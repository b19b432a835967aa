import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

EPS = 1e-5


def layernorm_kernel(x_ref, gamma_ref, beta_ref, o_ref):
    x = x_ref[...]
    mean = jnp.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = jnp.mean(centered * centered, axis=-1, keepdims=True)
    o_ref[...] = centered / jnp.sqrt(var + EPS) * gamma_ref[...] + beta_ref[...]


def solution(x, gamma, beta):
    rows, cols = x.shape
    block_rows = 8
    # The (cols,) parameters as (1, cols) rows, broadcast inside the kernel.
    gamma2 = gamma.reshape(1, cols)
    beta2 = beta.reshape(1, cols)
    return pl.pallas_call(
        layernorm_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(rows // block_rows,),
        in_specs=[pl.BlockSpec((block_rows, cols), lambda i: (i, 0)),
                  pl.BlockSpec((1, cols), lambda i: (0, 0)),
                  pl.BlockSpec((1, cols), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((block_rows, cols), lambda i: (i, 0)),
    )(x, gamma2, beta2)
