// A product that links fatcl::matmul only: C = A*B on the default device,
// checked against the double-precision reference by fatcl::run_checked.
#include <fatcl/matmul.hpp>
#include <iostream>
#include <random>

int main() {
  try {
    const cl::Device device = fatcl::pick_device();
    const cl::Context context(device);
    const cl::CommandQueue queue(context, device);
    const fatcl::Matmul matmul(context, device);
    const std::size_t m = 65, n = 33, k = 129;
    std::mt19937 rng(std::random_device{}());
    const fatcl::MatmulProblem p =
        fatcl::make_matmul_problem(context, m, n, k, fatcl::MatmulInputs::Random, &rng);
    const fatcl::CheckedRun r = fatcl::run_checked(queue, p, [&] {
      matmul.enqueue(queue, p.a, p.b, p.c, m, n, k);
      return std::string();
    });
    const double error = r.relative_error;
    std::cout << matmul.loaded().variant.name << ": relative error " << error << "\n";
    const bool ok = r.ok;
    if (!r.ran) std::cerr << "consumer: " << r.failure << "\n";
    std::cout << (ok ? "consumer OK" : "consumer FAILED") << "\n";
    return ok ? 0 : 1;
  } catch (const fatcl::Error& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
}
