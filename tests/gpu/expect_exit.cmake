# Runs COMMAND (words separated by '|') and fails unless its exit code is one of EXPECT (codes
# separated by '|', e.g. "0|69").
# With NO_GPU_REGEX, an exit of 69 must also print a line matching it (the "no GPU" message).
# With OUTPUT_REGEX, stdout+stderr must match it whatever the exit code.
# Usage: cmake -DCOMMAND=... -DEXPECT=... [-DNO_GPU_REGEX=...] [-DOUTPUT_REGEX=...] -P expect_exit.cmake
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" COMMAND "${COMMAND}")
string(REPLACE "|" ";" EXPECT "${EXPECT}")
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("exit ${code}\n${all}")
if(NOT code IN_LIST EXPECT)
  message(FATAL_ERROR "exit code ${code}, expected one of: ${EXPECT}")
endif()
if(code EQUAL 69 AND DEFINED NO_GPU_REGEX AND NOT all MATCHES "${NO_GPU_REGEX}")
  message(FATAL_ERROR "exit 69 without the expected message /${NO_GPU_REGEX}/")
endif()
if(DEFINED OUTPUT_REGEX AND NOT all MATCHES "${OUTPUT_REGEX}")
  message(FATAL_ERROR "output does not match /${OUTPUT_REGEX}/")
endif()
