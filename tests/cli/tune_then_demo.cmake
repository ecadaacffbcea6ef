# fatcl tune writes a store; fatcl demo (a product's load) then
# names the entry in its explanation, and bench reports both choices.
#   cmake -DFATCL=<fatcl> -DWORK=<folder> -P tune_then_demo.cmake
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(db "${WORK}/tuning.json")
execute_process(COMMAND "${FATCL}" tune --sizes 48 --budget 4s --database "${db}"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT err MATCHES "\\[1/[0-9]+\\] 48: matmul_blocked_[^\n]*best" OR
   NOT err MATCHES "1 tuning entry written to")
  message(FATAL_ERROR "fatcl tune failed (${status}):\n${out}${err}")
endif()
file(READ "${db}" text)
if(NOT text MATCHES "\"format\": \"fatcl-store\"" OR NOT text MATCHES "\"problem\": \\[[^]]*48")
  message(FATAL_ERROR "the database does not hold the entry:\n${text}")
endif()
set(ENV{FATCL_TUNING} "${db}")
execute_process(COMMAND "${FATCL}" demo --size 48 --no-clblast
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "tuning: tuning entry: matmul_blocked on [^\n]* for 48x48x48, measured")
  message(FATAL_ERROR "fatcl demo did not follow the entry (${status}):\n${out}${err}")
endif()
execute_process(COMMAND "${FATCL}" bench --sizes 48 --top 2 --reps 1 --no-clblast --json
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "\"heuristic_vs_best\"" OR
   NOT out MATCHES "\"auto_tuning\": \"tuning entry: ")
  message(FATAL_ERROR "fatcl bench does not report both choices (${status}):\n${out}${err}")
endif()
message(STATUS "ok: tune wrote ${db}, demo and bench followed it")
