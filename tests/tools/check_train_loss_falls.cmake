# plexus-train on a small set must learn: the last epoch's training loss
# below the first's, and a test accuracy printed for each epoch. TOOL is
# plexus-train, ARGS its options (a ;-list), EPOCHS how many it runs.
execute_process(COMMAND ${TOOL} ${ARGS} --epochs ${EPOCHS} --no-progress RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
message(STATUS "exit ${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "plexus-train failed (exit ${rc})")
endif()
math(EXPR last "${EPOCHS} - 1")
foreach(epoch 0 ${last})
  if(NOT out MATCHES "Epoch ${epoch}: loss ([0-9.]+), train acc [0-9.]+, test acc [0-9.]+")
    message(FATAL_ERROR "no figures for epoch ${epoch}")
  endif()
  set(loss_${epoch} ${CMAKE_MATCH_1})
endforeach()
# CMake compares decimals as numbers only when they are integers: scale by 1000.
string(REPLACE "." "" first "${loss_0}")
string(REPLACE "." "" final "${loss_${last}}")
math(EXPR first "${first}")
math(EXPR final "${final}")
if(NOT final LESS first)
  message(FATAL_ERROR "the loss did not fall: ${loss_0} in epoch 0, ${loss_${last}} in epoch ${last}")
endif()
