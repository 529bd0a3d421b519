# plexus-train --resume: two epochs run as one epoch, a stop, and a resumed
# second epoch end with the very parameters of two epochs unbroken, and
# with its metrics.csv and curves.svg (both epochs, whatever --out). TOOL is
# plexus-train, DATA a folder of plexus-make-idx's sets, WORK a scratch
# folder, ARGS more options (a ;-list: the optimizer and its settings).
file(REMOVE_RECURSE ${WORK})
set(common ${TOOL} --device cpu:0 --data ${DATA}/small --batch-size 25 --no-progress ${ARGS})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${ARGN}: exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "plexus-train failed (exit ${rc})")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
# metrics.csv less its timings, and the points drawn in curves.svg, of the run in FOLDER.
function(history folder)
  file(READ ${folder}/metrics.csv csv)
  string(REGEX REPLACE ",[0-9.]+,[0-9.]+\n" "\n" csv "${csv}")
  file(STRINGS ${folder}/curves.svg points REGEX "<circle")
  set(history "${csv}${points}" PARENT_SCOPE)
endfunction()
run(${common} --epochs 2 --out ${WORK}/unbroken)
history(${WORK}/unbroken)
set(unbroken "${history}")
run(${common} --epochs 1 --out ${WORK}/stopped)
# Resumed into another folder, then into its own: the parameters and the
# whole run's figures (epochs 0 and 1, not the resumed epoch alone) of the unbroken run.
foreach(to elsewhere stopped)
  run(${common} --epochs 2 --out ${WORK}/${to} --resume ${WORK}/stopped)
  if(NOT out MATCHES "Resuming from .* at epoch 1")
    message(FATAL_ERROR "the resumed run did not say where it went on from")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/unbroken/lenet.params ${WORK}/${to}/lenet.params
    RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "the resumed run's parameters differ from the unbroken run's (--out ${to})")
  endif()
  history(${WORK}/${to})
  if(NOT history STREQUAL unbroken)
    message(FATAL_ERROR "--out ${to}: the resumed run's metrics.csv and curves.svg\n${history}\n"
      "are not the unbroken run's\n${unbroken}")
  endif()
endforeach()
# Going on with other settings is refused, naming the first that differs.
execute_process(COMMAND ${common} --epochs 2 --lr 0.5 --out ${WORK}/y --resume ${WORK}/stopped RESULT_VARIABLE rc
  ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "the checkpoint was written with --lr [0-9.]+, this run has 0.5")
  message(FATAL_ERROR "resuming with another --lr: exit ${rc}, '${err}'")
endif()
# A checkpoint without its run.txt is refused, naming the file.
file(REMOVE ${WORK}/stopped/checkpoint-2/run.txt)
execute_process(COMMAND ${common} --epochs 3 --out ${WORK}/z --resume ${WORK}/stopped RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "checkpoint-2/run.txt is missing")
  message(FATAL_ERROR "resuming without run.txt: exit ${rc}, '${err}'")
endif()
# A folder without a checkpoint is refused, naming the file.
execute_process(COMMAND ${common} --epochs 1 --out ${WORK}/x --resume ${WORK}/nowhere RESULT_VARIABLE rc
  ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "nowhere/checkpoint.epoch is missing")
  message(FATAL_ERROR "resuming from an empty folder: exit ${rc}, '${err}'")
endif()
