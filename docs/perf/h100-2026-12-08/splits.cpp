// 127 x 8191 x 4099 through fatcl::Matmul, each variant forced with K split 1..12.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
#include "fatcl/matmul.hpp"
int main() {
  std::vector<cl::Platform> ps; cl::Platform::get(&ps);
  std::vector<cl::Device> ds; ps.at(0).getDevices(CL_DEVICE_TYPE_ALL, &ds);
  cl::Context ctx(ds[0]); cl::CommandQueue q(ctx, ds[0]);
  const size_t m = 127, n = 8191, k = 4099;
  std::vector<float> a(m * k), b(k * n);
  std::mt19937 rng(1); std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  cl::Buffer A(ctx, CL_MEM_COPY_HOST_PTR, a.size() * 4, a.data()), B(ctx, CL_MEM_COPY_HOST_PTR, b.size() * 4, b.data()),
      C(ctx, CL_MEM_READ_WRITE, m * n * 4);
  const char* vs[] = {
      "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC8_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1",
      "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1",
      "matmul_blocked_MWG128_NWG128_KWG8_MDIMC8_NDIMC16_VWM4_VWN4_SA1_SB1_KWI8_PF1_FMA0_DB1_VWA4",
      "matmul_blocked_MWG128_NWG64_KWG16_MDIMC16_NDIMC8_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1",
      "matmul_blocked_MWG128_NWG256_KWG8_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI8_PF1_FMA0_DB1_VWA4",
      "matmul_blocked_MWG64_NWG64_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1",
      "matmul_blocked_MWG64_NWG64_KWG16_MDIMC8_NDIMC8_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1"};
  for (int automatic = 1; automatic >= 0; --automatic) {
    for (const char* v : vs) {
      for (size_t s : {0, 1, 2, 3, 4, 6, 8, 12}) {
        if (automatic && (v != vs[0] || s != 0)) continue;
        fatcl::MatmulOptions o;
        if (!automatic) o.variant = v;
        o.k_splits = s;
        try {
          fatcl::Matmul mm(ctx, ds[0], o);
          std::vector<double> t;
          for (int r = 0; r < 12; ++r) {
            q.finish();
            auto t0 = std::chrono::steady_clock::now();
            mm.enqueue(q, A, B, C, m, n, k);
            q.finish();
            t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
          }
          std::sort(t.begin() + 2, t.end());
          const double med = t[2 + (t.size() - 2) / 2];
          std::printf("%s splits %zu: %.4f ms %.1f TFLOP/s launches %zu %s\n", automatic ? "auto" : v, s, med,
                      2.0 * m * n * k / med / 1e9, mm.launches(m, n, k), mm.loaded_for(m, n, k).variant.name.c_str());
        } catch (const std::exception& e) {
          std::printf("%s splits %zu: %s\n", v, s, e.what());
        }
        std::fflush(stdout);
      }
    }
  }
}
