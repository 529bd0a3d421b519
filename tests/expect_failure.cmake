# Runs COMMAND (a list), which must fail (nonzero exit, or killed by a
# signal) with EXPECT in its output: a job that loses a rank, or a fatal
# path of the CUDA emulator, must stop and say why.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit: ${code}\n${out}${err}")
if(code EQUAL 0)
  message(FATAL_ERROR "the command succeeded; it should have stopped with an error")
endif()
string(FIND "${out}${err}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the output does not say '${EXPECT}'")
endif()
