# Tests cmake/FatclCompareGenerated.cmake, the freshness check of generated/:
# a bundle built by another patch release of clang-15 (same modules, other
# version lines) is fresh; a changed module or manifest field is stale.
#   cmake -DSOURCE_DIR=<fatcl> -DWORK=<scratch folder> -P compare_generated_test.cmake
cmake_minimum_required(VERSION 3.20)
set(script "${SOURCE_DIR}/cmake/FatclCompareGenerated.cmake")
file(REMOVE_RECURSE "${WORK}")
file(COPY "${SOURCE_DIR}/generated/matmul_naive/" DESTINATION "${WORK}/committed")

function(reset_built)
  file(REMOVE_RECURSE "${WORK}/built")
  file(COPY "${SOURCE_DIR}/generated/matmul_naive/" DESTINATION "${WORK}/built")
endfunction()
function(edit file from to)
  file(READ "${WORK}/built/${file}" text)
  string(REPLACE "${from}" "${to}" edited "${text}")
  if(edited STREQUAL text)
    message(FATAL_ERROR "test setup: '${from}' not found in ${file}")
  endif()
  file(WRITE "${WORK}/built/${file}" "${edited}")
endfunction()
function(compare expect_ok match)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DBUILT=${WORK}/built -DCOMMITTED=${WORK}/committed
                          -DSTAMP=${WORK}/stamp -P "${script}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect_ok AND NOT status EQUAL 0)
    message(FATAL_ERROR "expected fresh, got stale:\n${out}${err}")
  elseif(NOT expect_ok AND status EQUAL 0)
    message(FATAL_ERROR "expected stale, got fresh:\n${out}${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${match}")
    message(FATAL_ERROR "expected the output to match '${match}':\n${out}${err}")
  endif()
  message(STATUS "ok: ${match}")
endfunction()

# Another patch release: the version lines differ in the manifest and in the
# manifest embedded in the .embed.cpp; nothing else does.
reset_built()
foreach(f manifest.json matmul_naive.embed.cpp)
  edit(${f} "Debian clang version 15.0.6" "Debian clang version 15.0.7")
  edit(${f} "Debian LLVM version 15.0.6" "Debian LLVM version 15.0.7")
endforeach()
compare(ON "only the recorded tool versions differ")

# A module that differs is stale, whatever the tool versions.
reset_built()
execute_process(COMMAND sh -c "printf '\\377' | dd of='${WORK}/built/matmul_naive.spv' bs=1 seek=100 conv=notrunc 2>/dev/null")
compare(OFF "matmul_naive.spv \\(differs\\)")

# Another source or parameters show in the manifest: stale.
reset_built()
file(READ "${WORK}/built/manifest.json" text)
string(REGEX REPLACE "\"source_sha256\": \"[0-9a-f]" "\"source_sha256\": \"x" text "${text}")
file(WRITE "${WORK}/built/manifest.json" "${text}")
compare(OFF "manifest.json \\(differs\\)")
