// An MPI return code that is not MPI_SUCCESS, as a plexus::Error naming the call.
#pragma once

namespace plexus::mpi {

void check_mpi(int code, const char* call);

}  // namespace plexus::mpi
