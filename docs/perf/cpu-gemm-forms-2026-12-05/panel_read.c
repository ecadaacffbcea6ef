/* How fast two threads read a 2048 x 2048 row-major matrix of doubles
 * (32 MiB) down column panels, a work-item's way of reading B in place
 * in a thin product, against reading it row by row. Each panel is read
 * over K in chunks of KC rows (the entry points' launches of K), each
 * chunk RR times in a row (the work-items that share B's columns).
 *   gcc -O2 -march=native -fopenmp -DKC=512 -DRR=1 panel_read.c -o panel_read
 *   OMP_NUM_THREADS=2 ./panel_read
 * A flush of 64 MiB before each timed pass; the best of 5. GB/s count the
 * matrix once, however often a chunk is reread. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifndef KC
#define KC 2048
#endif
#ifndef RR
#define RR 1
#endif
#define K 2048
#define N 2048

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void flush(double* f) {
  for (size_t i = 0; i < (8u << 20); i++) f[i] += 1;
}

int main(void) {
  double* b = aligned_alloc(64, (size_t)K * N * sizeof(double));
  double* f = aligned_alloc(64, (size_t)64 << 20);
  for (size_t i = 0; i < (size_t)K * N; i++) b[i] = i * 1e-9;
  for (size_t i = 0; i < (8u << 20); i++) f[i] = 0;
  double sink = 0;
  for (int w = 8; w <= 128; w *= 2) { /* panel width in doubles */
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
      flush(f);
      const double t0 = now();
      double s = 0;
      for (int kc = 0; kc < K; kc += KC) {
#pragma omp parallel for reduction(+ : s) schedule(static)
        for (int p = 0; p < N / w; p++) {
          __m512d acc = _mm512_setzero_pd(), acc2 = _mm512_setzero_pd();
          for (int r = 0; r < RR; r++) {
            for (int k = kc; k < kc + KC; k += 2) {
              for (int j = 0; j < w; j += 8)
                acc = _mm512_add_pd(acc, _mm512_load_pd(b + (size_t)k * N + p * w + j));
              for (int j = 0; j < w; j += 8)
                acc2 = _mm512_add_pd(acc2, _mm512_load_pd(b + (size_t)(k + 1) * N + p * w + j));
            }
          }
          s += _mm512_reduce_add_pd(acc) + _mm512_reduce_add_pd(acc2);
        }
      }
      const double t = now() - t0;
      if (t < best) best = t;
      sink += s;
    }
    printf("panels %3d doubles wide, K in %d, each chunk read %d times: %.3f ms, %.1f GB/s\n", w,
           KC, RR, best * 1e3, (double)K * N * 8 / best / 1e9);
  }
  double best = 1e9;
  for (int rep = 0; rep < 5; rep++) {
    flush(f);
    const double t0 = now();
    double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (int r = 0; r < K; r++) {
      __m512d acc = _mm512_setzero_pd();
      for (int j = 0; j < N; j += 8)
        acc = _mm512_add_pd(acc, _mm512_load_pd(b + (size_t)r * N + j));
      s += _mm512_reduce_add_pd(acc);
    }
    const double t = now() - t0;
    if (t < best) best = t;
    sink += s;
  }
  printf("rows streamed: %.3f ms, %.1f GB/s (checksum %s)\n", best * 1e3,
         (double)K * N * 8 / best / 1e9, sink > 0 ? "ok" : "zero");
  free(b);
  free(f);
  return 0;
}
