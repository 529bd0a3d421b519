// What the data readers share: errors that name the file, and opening one.
#pragma once

#include <sys/stat.h>

#include <string>

#include "plexus/plexus.hpp"

namespace plexus::data::detail {

// An InvalidArgumentError "<where>: <why>"; `where` names the file (and the
// member of an archive, the line of a text file).
[[noreturn]] inline void bad(const std::string& where, const std::string& why) {
    throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, where + ": " + why);
}

// A descriptor of the regular file at `path` (FIFOs and folders refused),
// or an error naming it.
int open_data_file(const std::string& path, struct stat& st);

// Why values over the limit are refused before one is read.
std::string over_limit(uint64_t limit);
// The same for `need` bytes of values that with `earlier` bytes read before
// them (an .npz's earlier arrays) pass the limit.
std::string over_limit(uint64_t limit, uint64_t need, uint64_t earlier);

}  // namespace plexus::data::detail
