# fatcl_add_kernel_variants(): compile one OpenCL C kernel family into
# validated SPIR-V variants and embed them into a library.
#
#   fatcl_add_kernel_variants(
#     TARGET <library>          created as a STATIC library, or added to
#     SOURCE <file.cl>
#     [FAMILY <name>]           default: the source's base name
#     [KERNEL <name>]           kernel function; default: FAMILY
#     [PARAM <NAME> <v1> <v2> ...]...   integers; several PARAMs span a grid
#     [CONSTRAINT <expr>...]    integer C expressions each point of the grid
#                               must meet, e.g. "MWG % MDIMC == 0"
#     [POINT <NAME=V,NAME=V,...>...]    chosen points, added to the grid
#     [INCLUDE_DIRS <dir>...]   for quoted #includes (inlined into the source)
#     [NAMESPACE <ns>]          of the accessor; default fatcl_kernels
#     [COMMITTED <dir>]         committed copy of the bundle (see below)
#     [CLANG_FLAGS <flag>...]   extra clang flags (experiments)
#     [BARRIER_CHECK refuse|warn|off]  a barrier only some work-items of a
#                               group may reach (under control flow that depends
#                               on the work-item): fails the build (refuse, the
#                               default), warns, or is not looked for
#     [NO_SOURCE]               embed no OpenCL C: the product runs only where a
#                               precompiled tier loads, and says so where none does
#     [TIERS <tier>...]         the tiers to embed, of spirv, ptx and source (default:
#                               all; ptx where its route is there): a tier left out
#                               is still validated (spirv) or not built (ptx); the
#                               manifest, the explanation and fatcl inspect say it
#                               was left out on purpose. The build prints what the
#                               product embeds per tier.
#     [LAUNCH <file.json>])     how to launch the kernel: the problem's sizes, the
#                               geometry and arguments as expressions over them and
#                               the parameters, and each size's tile edge (format in
#                               fatcl/launch_description.hpp); checked against every
#                               variant and kept in the manifest, for `fatcl launch`
#                               and `fatcl validate --oclgrind`
#
# The grid (the product of the PARAMs that meets every CONSTRAINT, plus the
# POINTs), the variant names and the compilation are fatcl-compile's: one
# add_custom_command runs `fatcl-compile family`, which compiles every point
# (clang-15 -O0 -> opt-15's clean-up -> llvm-spirv-15 -> SPIRV-Tools
# validation; an invalid module fails the build naming the variant; with
# llvm-link-15, llc-15 and libclc-15 also PTX for NVIDIA, assembled by ptxas where a CUDA toolkit is
# found, PTX it rejects failing the build) and writes manifest.json, the modules,
# <family>.embed.cpp and <family>.hpp, which declares
# `const fatcl::EmbeddedFamily& <ns>::<family>()`. Its depfile lists the
# source and the headers it includes. The .embed.cpp is compiled into TARGET;
# pass the accessor to fatcl::Family (fatcl/loader.hpp).
#
# COMMITTED: without clang-15/opt-15/llvm-spirv-15/fatcl-compile the committed copy
# is compiled instead (fatcl's own families also when fatcl is a subproject:
# FATCL_BUILD_KERNELS); with them and FATCL_CHECK_GENERATED set (fatcl's own
# development), the build checks that the committed copy holds what it builds
# (modules, source, parameters; not the tools' version lines), and the target
# fatcl-regenerate rewrites it.
#
# fatcl_add_validation_test(<target> [NAME <test>] [OCLGRIND]): a ctest test that
# runs `fatcl validate` (or `fatcl-compile validate`) on every bundle added to
# <target>: each module through SPIRV-Tools, each manifest entry against its
# module. OCLGRIND (needs the fatcl command and oclgrind on PATH): each family
# with a LAUNCH description also runs every variant at the tile edges of every
# variant under Oclgrind, from its OpenCL C source; a data race, a divergent
# barrier, an uninitialised value, an access out of bounds, or outputs that
# differ between variants fails the test naming the launch. NAME defaults to
# <target>.fatcl-validate.
#
# fatcl_add_device_check(<target> DEVICES <description>... [SOURCE_OK <device>...]
#                        [PROBLEM <MxNxK>] [TUNING <store.json>...] [NAME <test>]):
# a ctest test that runs `fatcl validate --device` on every bundle added to
# <target>: it predicts, without the devices, which variant and tier the
# loader would choose on each, and fails naming device and family where one
# would get no precompiled tier (only the OpenCL C source, or nothing).
# A description is a file `fatcl devices --json` wrote, or the name of one
# fatcl ships (e.g. nvidia-h200-580; FATCL_DEVICE_DESCRIPTIONS is their
# folder). SOURCE_OK: devices (substrings of "PLATFORM / NAME", or *) where
# a source build is acceptable. PROBLEM: the sizes the product loads for.
# TUNING: the product's tuning stores. NAME defaults to
# <target>.fatcl-devices.
include_guard(GLOBAL)

set(_FATCL_KERNELS_DIR "${CMAKE_CURRENT_LIST_DIR}")
# The device descriptions fatcl ships: the source tree's (an installed
# fatcl's config sets its own).
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../devices")
  get_filename_component(_fatcl_devices "${CMAKE_CURRENT_LIST_DIR}/../devices" ABSOLUTE)
  set_property(GLOBAL PROPERTY FATCL_DEVICE_DESCRIPTIONS "${_fatcl_devices}")
  set(FATCL_DEVICE_DESCRIPTIONS "${_fatcl_devices}")
endif()
find_program(FATCL_CLANG NAMES clang-15 DOC "clang for OpenCL C -> LLVM IR (fatcl)")
find_program(FATCL_LLVM_SPIRV NAMES llvm-spirv-15 DOC "LLVM IR -> SPIR-V translator (fatcl)")
# The PTX tier (NVIDIA): LLVM 15's tools and libclc's NVPTX library (libclc-15);
# ptxas from a CUDA toolkit, where there is one, validates the PTX.
find_program(FATCL_LLVM_LINK NAMES llvm-link-15 DOC "PTX route: llvm-link (fatcl)")
find_program(FATCL_OPT NAMES opt-15 DOC "opt: the SPIR-V route's clean-up and the PTX route (fatcl)")
find_program(FATCL_LLC NAMES llc-15 DOC "PTX route: llc (fatcl)")
find_file(FATCL_LIBCLC_NVPTX nvptx64--nvidiacl.bc PATHS /usr/lib/clc /usr/share/clc
          DOC "PTX route: libclc's NVPTX library (fatcl)")
find_program(FATCL_PTXAS NAMES ptxas PATHS /usr/local/cuda/bin DOC "PTX validation: ptxas (fatcl)")
set(FATCL_MAKES_PTX OFF)
if(FATCL_LLVM_LINK AND FATCL_OPT AND FATCL_LLC AND FATCL_LIBCLC_NVPTX)
  set(FATCL_MAKES_PTX ON)
  if(NOT FATCL_PTXAS)
    message(STATUS "fatcl: no ptxas (CUDA toolkit): the PTX tier's modules are built unvalidated")
  endif()
else()
  message(STATUS "fatcl: no PTX tier (needs llvm-link-15, opt-15, llc-15 and libclc-15's "
                 "nvptx64--nvidiacl.bc)")
endif()

function(fatcl_add_kernel_variants)
  # Split off repeated PARAM groups by hand, each into "--param=NAME=V1,V2";
  # the rest is ordinary keywords.
  set(rest "")
  set(param_args "")
  set(current "")
  set(keywords TARGET SOURCE FAMILY KERNEL INCLUDE_DIRS NAMESPACE COMMITTED CLANG_FLAGS CONSTRAINT
               POINT NO_SOURCE BARRIER_CHECK TIERS LAUNCH)
  macro(_fatcl_end_param)
    if(current MATCHES "^--param=.*=$")
      message(FATAL_ERROR "fatcl_add_kernel_variants: PARAM ${current} has no values")
    elseif(current MATCHES "^--param=")
      list(APPEND param_args "${current}")
    endif()
  endmacro()
  foreach(arg IN LISTS ARGN)
    if(arg STREQUAL "PARAM")
      _fatcl_end_param()
      set(current "__name__")
    elseif(arg IN_LIST keywords)
      _fatcl_end_param()
      set(current "")
      list(APPEND rest "${arg}")
    elseif(current STREQUAL "__name__")
      set(current "--param=${arg}=")
    elseif(current MATCHES "=$")
      string(APPEND current "${arg}")
    elseif(current MATCHES "^--param=")
      string(APPEND current ",${arg}")
    else()
      list(APPEND rest "${arg}")
    endif()
  endforeach()
  _fatcl_end_param()
  cmake_parse_arguments(F "NO_SOURCE" "TARGET;SOURCE;FAMILY;KERNEL;NAMESPACE;COMMITTED;BARRIER_CHECK;LAUNCH"
                        "INCLUDE_DIRS;CLANG_FLAGS;CONSTRAINT;POINT;TIERS" ${rest})
  if(F_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fatcl_add_kernel_variants: unexpected arguments: ${F_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required TARGET SOURCE)
    if(NOT F_${required})
      message(FATAL_ERROR "fatcl_add_kernel_variants: ${required} is required")
    endif()
  endforeach()
  get_filename_component(source "${F_SOURCE}" ABSOLUTE)
  if(NOT EXISTS "${source}")
    message(FATAL_ERROR "fatcl_add_kernel_variants: SOURCE ${source} does not exist")
  endif()
  if(NOT F_FAMILY)
    get_filename_component(F_FAMILY "${source}" NAME_WE)
  endif()
  if(NOT F_KERNEL)
    set(F_KERNEL "${F_FAMILY}")
  endif()
  if(NOT F_NAMESPACE)
    set(F_NAMESPACE fatcl_kernels)
  endif()
  set(committed "")
  if(F_COMMITTED)
    get_filename_component(committed "${F_COMMITTED}" ABSOLUTE)
  endif()

  if(NOT TARGET ${F_TARGET})
    add_library(${F_TARGET} STATIC)
    target_compile_features(${F_TARGET} PUBLIC cxx_std_17)
  endif()
  if(TARGET fatcl_core)
    target_link_libraries(${F_TARGET} PUBLIC fatcl_core)
  else()
    target_link_libraries(${F_TARGET} PUBLIC fatcl::core)
  endif()

  set(compile_tool "")
  if(TARGET fatcl-compile)
    set(compile_tool fatcl-compile)
  elseif(TARGET fatcl::fatcl-compile)
    set(compile_tool fatcl::fatcl-compile)
  endif()

  # fatcl's own families as a subproject (FATCL_BUILD_KERNELS off): the
  # committed copy, which fatcl's own build checks against what it compiles.
  if(NOT FATCL_CLANG OR NOT FATCL_LLVM_SPIRV OR NOT FATCL_OPT OR NOT compile_tool OR
     (committed AND _FATCL_USE_COMMITTED))
    if(NOT committed)
      message(FATAL_ERROR "fatcl_add_kernel_variants(${F_FAMILY}): needs clang-15, llvm-spirv-15, "
                          "opt-15 and fatcl-compile (apt-get install clang-15 llvm-spirv-15 llvm-15 "
                          "spirv-tools), or a COMMITTED copy")
    endif()
    if(NOT EXISTS "${committed}/${F_FAMILY}.embed.cpp")
      message(FATAL_ERROR "fatcl_add_kernel_variants(${F_FAMILY}): no toolchain and no "
                          "${committed}/${F_FAMILY}.embed.cpp")
    endif()
    if(_FATCL_USE_COMMITTED)
      message(STATUS "fatcl: ${F_FAMILY}: using the committed copy in ${committed}")
    else()
      message(STATUS "fatcl: ${F_FAMILY}: toolchain not found, using the committed copy in ${committed}")
    endif()
    target_sources(${F_TARGET} PRIVATE "${committed}/${F_FAMILY}.embed.cpp")
    # Each bundle's arrays are named alike in an anonymous namespace: a
    # unity build compiles it on its own.
    set_source_files_properties("${committed}/${F_FAMILY}.embed.cpp" PROPERTIES
                                SKIP_UNITY_BUILD_INCLUSION ON)
    target_include_directories(${F_TARGET} PUBLIC "$<BUILD_INTERFACE:${committed}>")
    set_property(TARGET ${F_TARGET} APPEND PROPERTY FATCL_BUNDLE_DIRS "${committed}")
    return()
  endif()

  set(out "${CMAKE_CURRENT_BINARY_DIR}/fatcl/${F_FAMILY}")
  set(args --family ${F_FAMILY} --kernel ${F_KERNEL} --source "${source}"
           --namespace ${F_NAMESPACE} --clang "${FATCL_CLANG}" --llvm-spirv "${FATCL_LLVM_SPIRV}"
           --opt "${FATCL_OPT}")
  foreach(dir IN LISTS F_INCLUDE_DIRS)
    get_filename_component(dir "${dir}" ABSOLUTE)
    list(APPEND args -I "${dir}")
  endforeach()
  list(APPEND args ${param_args})
  # The tiers the product embeds: all by default (PTX where its route is
  # there), the source unless NO_SOURCE.
  set(tiers spirv source)
  if(FATCL_MAKES_PTX)
    list(APPEND tiers ptx)
  endif()
  if(F_NO_SOURCE)
    list(REMOVE_ITEM tiers source)
  endif()
  if(DEFINED F_TIERS OR "TIERS" IN_LIST rest)
    if(NOT F_TIERS)
      message(FATAL_ERROR "fatcl_add_kernel_variants(${F_FAMILY}): TIERS names no tier "
                          "(spirv, ptx, source)")
    endif()
    foreach(tier IN LISTS F_TIERS)
      if(NOT tier MATCHES "^(spirv|ptx|source)$")
        message(FATAL_ERROR "fatcl_add_kernel_variants(${F_FAMILY}): TIERS: ${tier} is not a "
                            "tier (spirv, ptx, source)")
      endif()
    endforeach()
    if(F_NO_SOURCE AND "source" IN_LIST F_TIERS)
      message(FATAL_ERROR "fatcl_add_kernel_variants(${F_FAMILY}): NO_SOURCE and TIERS ... source "
                          "contradict each other")
    endif()
    if("ptx" IN_LIST F_TIERS AND NOT FATCL_MAKES_PTX)
      message(FATAL_ERROR "fatcl_add_kernel_variants(${F_FAMILY}): TIERS ptx needs llvm-link-15, "
                          "opt-15, llc-15 and libclc-15's nvptx64--nvidiacl.bc")
    endif()
    set(tiers ${F_TIERS})
  endif()
  if(NOT "source" IN_LIST tiers)
    list(APPEND args --no-source)
  endif()
  if(NOT "spirv" IN_LIST tiers)
    list(APPEND args --leave-out spirv)
  endif()
  # (Without the PTX route and without TIERS, a bundle simply has no PTX.)
  if(NOT "ptx" IN_LIST tiers AND (FATCL_MAKES_PTX OR F_TIERS))
    list(APPEND args --leave-out ptx)
  endif()
  if(F_BARRIER_CHECK)
    if(NOT F_BARRIER_CHECK MATCHES "^(refuse|warn|off)$")
      message(FATAL_ERROR "fatcl_add_kernel_variants: BARRIER_CHECK is refuse, warn or off, not "
                          "${F_BARRIER_CHECK}")
    endif()
    list(APPEND args --barrier-check ${F_BARRIER_CHECK})
  endif()
  set(launch "")
  if(F_LAUNCH)
    get_filename_component(launch "${F_LAUNCH}" ABSOLUTE)
    if(NOT EXISTS "${launch}")
      message(FATAL_ERROR "fatcl_add_kernel_variants(${F_FAMILY}): LAUNCH ${launch} does not exist")
    endif()
    list(APPEND args --launch "${launch}")
  endif()
  foreach(c IN LISTS F_CONSTRAINT)
    list(APPEND args "--constraint=${c}")
  endforeach()
  foreach(p IN LISTS F_POINT)
    list(APPEND args "--point=${p}")
  endforeach()
  foreach(flag IN LISTS F_CLANG_FLAGS)
    list(APPEND args "--extra-clang-flag=${flag}")
  endforeach()
  if(FATCL_MAKES_PTX AND "ptx" IN_LIST tiers)
    list(APPEND args --llvm-link "${FATCL_LLVM_LINK}" --llc "${FATCL_LLC}"
                     --libclc-nvptx "${FATCL_LIBCLC_NVPTX}")
    if(FATCL_PTXAS)
      list(APPEND args --ptxas "${FATCL_PTXAS}")
    endif()
  endif()

  set(bundle_outputs "${out}/bundle/manifest.json" "${out}/bundle/${F_FAMILY}.embed.cpp"
                     "${out}/bundle/${F_FAMILY}.hpp")
  add_custom_command(
    OUTPUT ${bundle_outputs}
    COMMAND ${compile_tool} family ${args} --out-dir "${out}/bundle" --depfile "${out}/family.d"
    DEPENDS "${source}" ${launch} ${compile_tool}
    DEPFILE "${out}/family.d"
    COMMENT "fatcl: compile, validate and bundle the variants of ${F_FAMILY}"
    VERBATIM)
  target_sources(${F_TARGET} PRIVATE "${out}/bundle/${F_FAMILY}.embed.cpp")
  set_source_files_properties("${out}/bundle/${F_FAMILY}.embed.cpp" PROPERTIES
                              SKIP_UNITY_BUILD_INCLUSION ON)
  target_include_directories(${F_TARGET} PUBLIC "$<BUILD_INTERFACE:${out}/bundle>")
  set_property(TARGET ${F_TARGET} APPEND PROPERTY FATCL_BUNDLE_DIRS "${out}/bundle")

  if(committed)
    set(compare -DBUILT=${out}/bundle -DCOMMITTED=${committed}
                -P "${_FATCL_KERNELS_DIR}/FatclCompareGenerated.cmake")
    if(FATCL_CHECK_GENERATED AND NOT FATCL_MAKES_PTX)
      message(STATUS "fatcl: ${F_COMMITTED} not checked for freshness: this build makes no PTX")
    elseif(FATCL_CHECK_GENERATED)
      file(GLOB committed_files "${committed}/*")
      add_custom_command(
        OUTPUT "${out}/committed-copy-is-fresh.stamp"
        COMMAND ${CMAKE_COMMAND} -DSTAMP=${out}/committed-copy-is-fresh.stamp ${compare}
        DEPENDS ${bundle_outputs} ${committed_files}
        COMMENT "fatcl: check that ${F_COMMITTED} matches the fresh build of ${F_FAMILY}"
        VERBATIM)
      add_custom_target(${F_TARGET}_${F_FAMILY}_check ALL
                        DEPENDS "${out}/committed-copy-is-fresh.stamp")
    endif()
    add_custom_target(${F_TARGET}_${F_FAMILY}_regenerate
                      COMMAND ${CMAKE_COMMAND} -DREGENERATE=ON ${compare}
                      DEPENDS ${bundle_outputs}
                      COMMENT "fatcl: regenerate ${F_COMMITTED}"
                      VERBATIM)
    if(NOT TARGET fatcl-regenerate)
      add_custom_target(fatcl-regenerate)
    endif()
    add_dependencies(fatcl-regenerate ${F_TARGET}_${F_FAMILY}_regenerate)
  endif()
endfunction()

# The bundle folders of <target> (an alias is followed) into <bundles_out>,
# the real target into <target_out>; fails, starting with <who>, if it is no
# target or has no kernel family.
function(_fatcl_bundles_of who target target_out bundles_out)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "${who}: ${target} is not a target")
  endif()
  get_target_property(aliased ${target} ALIASED_TARGET)
  if(aliased)
    set(target ${aliased})
  endif()
  get_target_property(bundles ${target} FATCL_BUNDLE_DIRS)
  if(NOT bundles)
    message(FATAL_ERROR "${who}: ${target} has no kernel family "
                        "(add one with fatcl_add_kernel_variants first)")
  endif()
  set(${target_out} ${target} PARENT_SCOPE)
  set(${bundles_out} "${bundles}" PARENT_SCOPE)
endfunction()

# A test named <name> that runs the fatcl command with the arguments after
# <added>, which is set to whether the command is there (fatcl::fatcl, or
# fatcl's own target, built all the same where fatcl was added with
# EXCLUDE_FROM_ALL).
function(_fatcl_add_command_test name added)
  set(${added} FALSE PARENT_SCOPE)
  foreach(tool fatcl fatcl::fatcl)
    if(TARGET ${tool})
      add_test(NAME ${name} COMMAND ${tool} ${ARGN})
      get_target_property(imported ${tool} IMPORTED)
      get_target_property(real_tool ${tool} ALIASED_TARGET)
      if(NOT real_tool)
        set(real_tool ${tool})
      endif()
      if(NOT imported AND NOT TARGET ${name}.tool)
        add_custom_target(${name}.tool ALL)
        add_dependencies(${name}.tool ${real_tool})
      endif()
      set(${added} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

function(fatcl_add_validation_test target)
  cmake_parse_arguments(V "OCLGRIND" "NAME" "" ${ARGN})
  if(V_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fatcl_add_validation_test: unexpected arguments: ${V_UNPARSED_ARGUMENTS}")
  endif()
  _fatcl_bundles_of(fatcl_add_validation_test ${target} target bundles)
  if(NOT V_NAME)
    set(V_NAME ${target}.fatcl-validate)
  endif()
  set(oclgrind "")
  if(V_OCLGRIND)
    set(oclgrind --oclgrind)
  endif()
  _fatcl_add_command_test(${V_NAME} added validate ${oclgrind} ${bundles})
  if(added)
    return()
  endif()
  if(V_OCLGRIND)
    message(FATAL_ERROR "fatcl_add_validation_test(${target} OCLGRIND): needs the fatcl command "
                        "(fatcl built with CLI11), which runs the variants under Oclgrind")
  endif()
  foreach(tool fatcl-compile fatcl::fatcl-compile)
    if(TARGET ${tool})
      add_test(NAME ${V_NAME} COMMAND ${tool} validate ${bundles})
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "fatcl_add_validation_test: neither the fatcl command nor fatcl-compile "
                      "is available (fatcl was built without SPIRV-Tools, SPIRV-Headers, OpenSSL "
                      "or CLI11)")
endfunction()

function(fatcl_add_device_check target)
  cmake_parse_arguments(D "" "NAME;PROBLEM" "DEVICES;SOURCE_OK;TUNING" ${ARGN})
  if(D_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fatcl_add_device_check: unexpected arguments: ${D_UNPARSED_ARGUMENTS}")
  endif()
  _fatcl_bundles_of(fatcl_add_device_check ${target} target bundles)
  if(NOT D_DEVICES)
    message(FATAL_ERROR "fatcl_add_device_check: name the target devices (DEVICES <description>...)")
  endif()
  get_property(shipped GLOBAL PROPERTY FATCL_DEVICE_DESCRIPTIONS)
  set(args "")
  foreach(device IN LISTS D_DEVICES)
    if(NOT EXISTS "${device}" AND EXISTS "${shipped}/${device}.json")
      set(device "${shipped}/${device}.json")
    elseif(NOT EXISTS "${device}")
      file(GLOB known RELATIVE "${shipped}" "${shipped}/*.json")
      string(REPLACE ".json" "" known "${known}")
      message(FATAL_ERROR "fatcl_add_device_check: ${device} is neither a file nor a device "
                          "description fatcl ships (${known})")
    endif()
    list(APPEND args --device "${device}")
  endforeach()
  foreach(device IN LISTS D_SOURCE_OK)
    list(APPEND args --source-ok "${device}")
  endforeach()
  foreach(store IN LISTS D_TUNING)
    list(APPEND args --tuning "${store}")
  endforeach()
  if(D_PROBLEM)
    list(APPEND args --problem "${D_PROBLEM}")
  endif()
  if(NOT D_NAME)
    set(D_NAME ${target}.fatcl-devices)
  endif()
  _fatcl_add_command_test(${D_NAME} added validate ${args} ${bundles})
  if(added)
    return()
  endif()
  message(FATAL_ERROR "fatcl_add_device_check: the fatcl command is not available (fatcl was "
                      "built without it)")
endfunction()
