// Deliberately wrong transpose: 8x8 blocking that only handles full tiles, so the edges of shapes
// that are not multiples of 8 are never written (correct at 4096x4096).
extern "C" void transpose(int rows, int cols, const float* x, float* y) {
    const int rb = rows / 8 * 8, cb = cols / 8 * 8;
    for (int i0 = 0; i0 < rb; i0 += 8)
        for (int j0 = 0; j0 < cb; j0 += 8)
            for (int i = i0; i < i0 + 8; ++i)
                for (int j = j0; j < j0 + 8; ++j)
                    y[j * rows + i] = x[i * cols + j];
}
