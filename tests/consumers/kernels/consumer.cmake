# The consumer's own part, shared by the find_package, add_subdirectory and
# FetchContent projects: its kernel family, its program, and the tests a user
# adds: the program on the default device, and fatcl validate on its bundle.
set(kernels "${CMAKE_CURRENT_LIST_DIR}")
fatcl_add_kernel_variants(
  TARGET consumer_kernels
  SOURCE "${kernels}/saxpy.cl"
  INCLUDE_DIRS "${kernels}"
  PARAM WPT 1 2 4
  PARAM VW 1 4)
# The same kernel as a product that ships no OpenCL C: SPIR-V only.
fatcl_add_kernel_variants(
  TARGET consumer_kernels
  SOURCE "${kernels}/saxpy.cl"
  FAMILY saxpy_sealed
  KERNEL saxpy
  INCLUDE_DIRS "${kernels}"
  PARAM WPT 2
  PARAM VW 4
  NO_SOURCE)
add_executable(consumer "${kernels}/main.cpp")
target_link_libraries(consumer PRIVATE consumer_kernels fatcl::loader fatcl::matmul)

enable_testing()
add_test(NAME consumer-runs COMMAND consumer)
set_tests_properties(consumer-runs PROPERTIES PASS_REGULAR_EXPRESSION "consumer OK")
fatcl_add_validation_test(consumer_kernels)
