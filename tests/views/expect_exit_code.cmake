# cmake -DEXPECTED=N -DARGS="a;b;c" -P expect_exit_code.cmake
# Runs ARGS and passes only on exit code N: WILL_FAIL would also pass a crash.
string(REPLACE "|" ";" _command "${ARGS}")
execute_process(COMMAND ${_command} RESULT_VARIABLE _rc)
if(NOT "${_rc}" STREQUAL "${EXPECTED}")
  message(FATAL_ERROR "expected exit code ${EXPECTED}, got '${_rc}' from: ${_command}")
endif()
