// A product that links fatcl::matmul only: C = A*B on the default device,
// checked against the double-precision reference.
#include <fatcl/matmul.hpp>
#include <iostream>
#include <limits>
#include <random>

int main() {
  try {
    const cl::Device device = fatcl::pick_device();
    const cl::Context context(device);
    const cl::CommandQueue queue(context, device);
    const fatcl::Matmul matmul(context, device);
    const std::size_t m = 65, n = 33, k = 129;
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> a(m * k), b(k * n), c(m * n);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    cl::Buffer da(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, a.size() * 4, a.data());
    cl::Buffer db(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b.size() * 4, b.data());
    cl::Buffer dc(context, CL_MEM_READ_WRITE, c.size() * 4);
    queue.enqueueFillBuffer(dc, std::numeric_limits<float>::quiet_NaN(), 0, c.size() * 4);
    matmul.enqueue(queue, da, db, dc, m, n, k);
    queue.enqueueReadBuffer(dc, CL_TRUE, 0, c.size() * 4, c.data());
    const double error = fatcl::relative_error(c, fatcl::reference_matmul(a, b, m, n, k));
    std::cout << matmul.loaded().variant.name << ": relative error " << error << "\n";
    const bool ok = error <= 1e-5;
    std::cout << (ok ? "consumer OK" : "consumer FAILED") << "\n";
    return ok ? 0 : 1;
  } catch (const fatcl::Error& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
}
