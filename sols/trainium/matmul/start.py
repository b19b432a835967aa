from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def solution(lhs_t, rhs):
    """result[M, N] = lhs_t[K, M].T @ rhs[K, N], float16 inputs, float32 result, tiled for the Tensor Engine."""
    k_size, m_size = lhs_t.shape
    _, n_size = rhs.shape
    result = nl.ndarray((m_size, n_size), dtype=nl.float32, buffer=nl.shared_hbm)
    tile_m = nl.tile_size.gemm_stationary_fmax  # 128: the stationary operand's free size
    tile_k = nl.tile_size.pmax  # 128: the contraction runs over the partition dimension
    tile_n = nl.tile_size.gemm_moving_fmax  # 512: the moving operand's free size
    for m in nl.affine_range(m_size // tile_m):
        for n in nl.affine_range(n_size // tile_n):
            acc = nl.zeros((tile_m, tile_n), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(k_size // tile_k):
                lhs_tile = nl.load(lhs_t[k * tile_k:(k + 1) * tile_k, m * tile_m:(m + 1) * tile_m])
                rhs_tile = nl.load(rhs[k * tile_k:(k + 1) * tile_k, n * tile_n:(n + 1) * tile_n])
                acc += nl.matmul(lhs_tile, rhs_tile, transpose_x=True)
            out_tile = nl.copy(acc, dtype=nl.float32)
            nl.store(result[m * tile_m:(m + 1) * tile_m, n * tile_n:(n + 1) * tile_n], value=out_tile)
    return result
