# Included by the check_tool_*.cmake scripts: runs TOOL on PLUGIN with more
# arguments ARGS, writing its JSON report to OUT, requires exit status
# `expected_rc`, and reads the report into `json` (stdout and stderr in `out`
# and `err`).
macro(run_tool_json expected_rc)
  separate_arguments(args UNIX_COMMAND "${ARGS}")
  file(REMOVE ${OUT})
  execute_process(COMMAND ${TOOL} --plugin ${PLUGIN} --json ${OUT} ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${expected_rc}")
    message(FATAL_ERROR "expected exit status ${expected_rc}, got '${rc}'\n${out}\n${err}")
  endif()
  file(READ ${OUT} json)
endmacro()
