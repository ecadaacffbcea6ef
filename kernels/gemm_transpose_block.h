/* The block that gemm_transpose (gemm_transpose.cl) moves a work-item, in
 * rows and columns of X: the kernel's loops and the host's NDRange
 * (gemm/src/families.cpp, launch_transpose) read the same two numbers. */
#define GEMM_TRANSPOSE_BLOCK_ROWS 8
#define GEMM_TRANSPOSE_BLOCK_COLS 16
