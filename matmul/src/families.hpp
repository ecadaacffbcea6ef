// What the bundled families share with fatcl::Matmul beyond the public
// header: setting a variant's arguments and launching it.
#pragma once

#include <vector>

#include "fatcl/matmul.hpp"

namespace fatcl::detail {

// Launches one kernel of a matmul family over geometry `g` for the
// m x n x k product (A, B, C row-major with leading dimensions lda, ldb,
// ldc; the slice of K from k_offset; accumulate: C += rather than C =).
// A skinny family's kernel takes one more argument, the workspace of its K
// splits (`workspace`; C where K is not split); a blocked one writes its
// parts into C, the workspace passed as C. `b_start`: where in `b` the
// product's B starts (a packed panel, or a panel's first column). Throws
// fatcl::Error naming the argument or call that failed.
cl::Event launch_matmul(const cl::CommandQueue& queue, const cl::Kernel& kernel,
                        const LaunchGeometry& g, const cl::Buffer& a, const cl::Buffer& b,
                        const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                        std::size_t lda, std::size_t ldb, std::size_t ldc, std::size_t k_offset,
                        bool accumulate, const std::vector<cl_event>& wait,
                        const cl::Buffer* workspace = nullptr, std::size_t b_start = 0);

// The second pass of a skinny product split over `splits` parts of K
// (matmul_splitk_sum, in the same program): C = (or +=) the sum of the
// partial products in `workspace`, in split order.
cl::Event launch_splitk_sum(const cl::CommandQueue& queue, const cl::Kernel& sum,
                            const cl::Buffer& workspace, const cl::Buffer& c, std::size_t m,
                            std::size_t n, std::size_t splits, std::size_t ldc, bool accumulate,
                            const std::vector<cl_event>& wait);

}  // namespace fatcl::detail
