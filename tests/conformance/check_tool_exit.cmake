# Runs TOOL with ARGS (a ;-list) and requires exit status RC and output
# (stdout and stderr) matching EXPECT.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${TOOL} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc EQUAL RC)
  message(FATAL_ERROR "expected exit status ${RC}, got ${rc}\n${all}")
endif()
if(NOT all MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}':\n${all}")
endif()
