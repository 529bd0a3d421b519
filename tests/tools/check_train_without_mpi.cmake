# plexus-train needs no MPI: its ELF file names neither libmpi nor
# libplexus-mpi, and a copy with no libplexus-train-mpi beside it trains on
# its own devices but refuses --distributed, naming where it looked. A module
# there that cannot be loaded, that is some other library, or whose MPI
# cannot start is refused too, each with its reason.
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
set(module ${prefix}/lib/plexus/libplexus-train-mpi.so)

# Runs the lonely copy with --distributed; it must exit 2 (as for any option
# it cannot honour) with every regex in ARGN in its error output.
function(expect_refusal case)
  execute_process(COMMAND ${prefix}/bin/plexus-train --distributed --epochs 1 --max-batches 1 --out ${prefix}/out
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "${case}: expected exit 2, got ${rc}:\n${out}\n${err}")
  endif()
  foreach(expected IN LISTS ARGN)
    if(NOT err MATCHES "${expected}")
      message(FATAL_ERROR "${case}: the message lacks '${expected}':\n${err}")
    endif()
  endforeach()
  message(STATUS "${case}: refused as expected:\n${err}")
endfunction()

file(REMOVE_RECURSE ${prefix})
file(MAKE_DIRECTORY ${prefix}/bin ${prefix}/lib/plexus)
file(COPY ${TOOL} DESTINATION ${prefix}/bin)
set(needs "--distributed needs a loadable libplexus-train-mpi.so .built with plexus when MPI is found")
expect_refusal("no module" "${needs}" "${module}: not there")

# Not a shared library at all: dlerror's own words come through.
file(WRITE ${module} "junk")
expect_refusal("a damaged module" "${needs}" "${module}: it could not be loaded: .*file too short")

# A shared library, but not this one (a plugin).
configure_file(${NOT_A_MODULE} ${module} COPYONLY)
expect_refusal("another library" "${needs}" "${module}: it has no plexus_train_open_ranks .not plexus-train's MPI module.")

# The module loads, but its MPI cannot start.
configure_file(${FAKE_MODULE} ${module} COPYONLY)
expect_refusal("MPI failing to start" "--distributed: starting MPI failed: MPI_Init_thread failed .a test module that has no MPI.")
