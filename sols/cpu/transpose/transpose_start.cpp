// Starting point: read x row by row and scatter each element to its transposed position.
// y[j*rows + i] = x[i*cols + j].
extern "C" void transpose(int rows, int cols, const float* x, float* y) {
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
            y[j * rows + i] = x[i * cols + j];
}
