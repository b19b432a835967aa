import jax
from jax.experimental import pallas as pl


def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def solution(x, y):
    rows, cols = x.shape
    # Narrow tiles: correct for every shape (rows a multiple of 8, cols of 128), but many grid steps,
    # each moving little data.
    block = (min(rows, 64), 128)
    spec = pl.BlockSpec(block, lambda i, j: (i, j))
    return pl.pallas_call(
        add_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(rows // block[0], cols // block[1]),
        in_specs=[spec, spec],
        out_specs=spec,
    )(x, y)
