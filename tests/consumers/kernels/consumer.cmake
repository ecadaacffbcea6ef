# The consumer's own part, shared by the find_package, add_subdirectory and
# FetchContent projects: its kernel family, its program, and the tests a user
# adds: the program on the default device, and fatcl validate on its bundle.
set(kernels "${CMAKE_CURRENT_LIST_DIR}")
fatcl_add_kernel_variants(
  TARGET consumer_kernels
  SOURCE "${kernels}/saxpy.cl"
  INCLUDE_DIRS "${kernels}"
  PARAM WPT 1 2 4
  PARAM VW 1 4
  LAUNCH "${kernels}/saxpy.launch.json")
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
# The same kernel as a product that ships only SPIR-V (TIERS): no PTX, no source.
fatcl_add_kernel_variants(
  TARGET consumer_kernels
  SOURCE "${kernels}/saxpy.cl"
  FAMILY saxpy_lean
  KERNEL saxpy
  INCLUDE_DIRS "${kernels}"
  PARAM WPT 2
  PARAM VW 4
  TIERS spirv)
add_executable(consumer "${kernels}/main.cpp")
target_link_libraries(consumer PRIVATE consumer_kernels fatcl::loader fatcl::matmul)

enable_testing()
add_test(NAME consumer-runs COMMAND consumer)
set_tests_properties(consumer-runs PROPERTIES PASS_REGULAR_EXPRESSION "consumer OK")
fatcl_add_validation_test(consumer_kernels)
# With the fatcl command (fetch-content hides CLI11, which it needs): the
# choice on the devices the product targets, computed without them, and what
# the product's program carries.
if(TARGET fatcl OR TARGET fatcl::fatcl)
  # Each target gets a precompiled tier (SPIR-V on Intel's CPU runtime and
  # on the SPIR-V PoCL).
  fatcl_add_device_check(consumer_kernels
    DEVICES intel-cpu-2026.2-epyc-zen4 pocl-3.1-spirv-epyc-zen4)
  # A target it cannot serve: Oclgrind (OpenCL 1.2, no IL) builds the
  # source, accepted there, but the sealed family ships none: the check
  # names device and family.
  fatcl_add_device_check(consumer_kernels NAME consumer-misses-oclgrind
    DEVICES oclgrind-21.10 SOURCE_OK Oclgrind)
  set_tests_properties(consumer-misses-oclgrind PROPERTIES PASS_REGULAR_EXPRESSION
    "problem: Oclgrind Simulator [^\n]*family saxpy_sealed: nothing would load")
  if(TARGET fatcl::fatcl)
    set(fatcl_command fatcl::fatcl)
  else()
    set(fatcl_command fatcl)
  endif()
  # Every variant of the family with a launch description (saxpy) at the
  # tile edges of every variant under Oclgrind, read out of the product's
  # program: no data race, uninitialised value or access out of bounds, and
  # every variant computes what the first does. (The sealed and lean
  # families ship no OpenCL C, which Oclgrind needs, and no description.)
  add_test(NAME consumer-oclgrind
           COMMAND ${fatcl_command} validate --oclgrind $<TARGET_FILE:consumer>)
  set_tests_properties(consumer-oclgrind PROPERTIES
    PASS_REGULAR_EXPRESSION "saxpy on Oclgrind[^\n]*[(]inputs seed [0-9]+, 11 problems[)]\n    66 launch[(]es[)] ran and agreed, 0 problem")
  add_test(NAME consumer-inspect COMMAND ${fatcl_command} inspect --json $<TARGET_FILE:consumer>)
  set_tests_properties(consumer-inspect PROPERTIES
    PASS_REGULAR_EXPRESSION "\"family\": \"saxpy_sealed\""
    FAIL_REGULAR_EXPRESSION "\"ok\": false")
endif()
