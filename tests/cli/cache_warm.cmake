# fatcl cache warm, twice into an empty cache folder: the first run builds
# every (variant, tier) the device takes of the families named (all when
# FAMILIES is empty) and none fails, the second finds them all cached and
# builds nothing.
#   cmake -DFATCL=<fatcl> -DWORK=<folder> -DFAMILIES=<a;b> -DEXPECT=<count> -P cache_warm.cmake
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
set(ENV{FATCL_CACHE_DIR} "${WORK}")
set(family_options "")
foreach(f IN LISTS FAMILIES)
  list(APPEND family_options --family ${f})
endforeach()
foreach(round first second)
  execute_process(COMMAND "${FATCL}" cache warm ${family_options} RESULT_VARIABLE status OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "the ${round} cache warm failed (${status}):\n${out}${err}")
  endif()
  if(NOT err MATCHES ": ([0-9]+) built, ([0-9]+) already cached, ([0-9]+) failed")
    message(FATAL_ERROR "the ${round} cache warm printed no count:\n${out}${err}")
  endif()
  set(built ${CMAKE_MATCH_1})
  set(cached ${CMAKE_MATCH_2})
  set(failed ${CMAKE_MATCH_3})
  if(NOT failed EQUAL 0)
    message(FATAL_ERROR "${failed} builds failed in the ${round} cache warm:\n${out}${err}")
  endif()
  if(round STREQUAL "first")
    math(EXPR loaded "${built} + ${cached}")
    if(NOT loaded EQUAL EXPECT OR built EQUAL 0)
      message(FATAL_ERROR "the first cache warm loaded ${loaded} programs, not the ${EXPECT} "
                          "(variant, tier) of ${FAMILIES}:\n${err}")
    endif()
  elseif(NOT built EQUAL 0 OR NOT cached EQUAL EXPECT)
    message(FATAL_ERROR "the second cache warm built ${built} and found ${cached} cached; "
                        "expected 0 and ${EXPECT}:\n${err}")
  endif()
  message(STATUS "${round}: ${built} built, ${cached} already cached")
endforeach()
