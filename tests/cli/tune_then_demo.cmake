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

# Shared by a fleet: the entry exported, merged into another node's store
# (then again: nothing new), and read as a system layer by a product whose
# own store is off.
set(exported "${WORK}/export.json")
set(other "${WORK}/other-node.json")
execute_process(COMMAND "${FATCL}" tune --database "${db}" --export "${exported}"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT err MATCHES "1 tuning entries of [^\n]* exported to [^\n]*export.json \\(1 new")
  message(FATAL_ERROR "fatcl tune --export failed (${status}):\n${out}${err}")
endif()
file(READ "${exported}" text)
if(NOT text MATCHES "\"provenance\": \"fatcl tune on ")
  message(FATAL_ERROR "the export does not say who measured:\n${text}")
endif()
foreach(round "1 new, 0 replaced, 0 kept" "0 new, 0 replaced, 1 kept")
  execute_process(COMMAND "${FATCL}" tune --database "${other}" --merge "${exported}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0 OR NOT err MATCHES "merged [^\n]*export.json into [^\n]*other-node.json: ${round}")
    message(FATAL_ERROR "fatcl tune --merge did not say \"${round}\" (${status}):\n${out}${err}")
  endif()
endforeach()
set(ENV{FATCL_TUNING} "off")
set(ENV{FATCL_TUNING_SYSTEM} "${other}")
execute_process(COMMAND "${FATCL}" demo --size 48 --no-clblast
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "tuning: tuning entry: matmul_blocked on [^\n]* for 48x48x48, measured [^\n]*\\(system layer [^\n]*other-node.json\\)")
  message(FATAL_ERROR "fatcl demo did not follow the system layer (${status}):\n${out}${err}")
endif()
message(STATUS "ok: exported, merged once, and read as a system layer")
