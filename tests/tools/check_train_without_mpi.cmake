# plexus-train needs no MPI: its ELF file names neither libmpi nor
# libplexus-mpi, and a copy with no libplexus-train-mpi beside it trains on
# its own devices but refuses --distributed, naming where it looked.
execute_process(COMMAND ${OBJDUMP} -p ${TOOL} OUTPUT_VARIABLE headers RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objdump -p ${TOOL} failed")
endif()
string(REGEX MATCHALL "NEEDED +[^\n]+" needed "${headers}")
message(STATUS "plexus-train needs: ${needed}")
if(needed MATCHES "mpi")
  message(FATAL_ERROR "plexus-train links MPI: ${needed}")
endif()
if(NOT needed MATCHES "libplexus-nn")
  message(FATAL_ERROR "objdump output not understood (no libplexus-nn among ${needed})")
endif()

set(prefix ${WORK}/lonely)
file(REMOVE_RECURSE ${prefix})
file(MAKE_DIRECTORY ${prefix}/bin)
file(COPY ${TOOL} DESTINATION ${prefix}/bin)
execute_process(COMMAND ${prefix}/bin/plexus-train --distributed --epochs 1 --max-batches 1 --out ${prefix}/out
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--distributed needs libplexus-train-mpi.so .built with plexus when MPI is found")
  message(FATAL_ERROR "expected exit 2 (as for any option it cannot honour) and the reason, got ${rc}:\n${out}\n${err}")
endif()
if(NOT err MATCHES "${prefix}/[^\n]*/plexus/libplexus-train-mpi.so: not there")
  message(FATAL_ERROR "the message does not name where it looked:\n${err}")
endif()
message(STATUS "refused as expected:\n${err}")
