// Known wrong (`autocomp targets check`): 8x8 tiles only, so the ragged edges of shapes that are not
// multiples of 8 are never written. The judge must say `incorrect`.
extern "C" void transpose(int rows, int cols, const float* x, float* y) {
    for (int i0 = 0; i0 + 8 <= rows; i0 += 8)
        for (int j0 = 0; j0 + 8 <= cols; j0 += 8)
            for (int i = i0; i < i0 + 8; ++i)
                for (int j = j0; j < j0 + 8; ++j)
                    y[j * rows + i] = x[i * cols + j];
}
