# The consumer's own part, shared by the find_package, add_subdirectory and
# FetchContent projects.
set(kernels "${CMAKE_CURRENT_LIST_DIR}")
fatcl_add_kernel_variants(
  TARGET consumer_kernels
  SOURCE "${kernels}/saxpy.cl"
  INCLUDE_DIRS "${kernels}"
  PARAM WPT 1 2 4
  PARAM VW 1 4)
add_executable(consumer "${kernels}/main.cpp")
target_link_libraries(consumer PRIVATE consumer_kernels fatcl::loader fatcl::matmul)
