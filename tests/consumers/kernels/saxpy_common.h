/* Shared by the consumer's kernels: inlined into the embedded source. */
#define SAXPY(a, x, y) ((a) * (x) + (y))
