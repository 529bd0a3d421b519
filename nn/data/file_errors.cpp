// Opening a data file and the limit's refusal, shared by the readers.
#include "file_errors.hpp"

#include "regular_file.hpp"

namespace plexus::data::detail {

int open_data_file(const std::string& path, struct stat& st, const std::string& hint) {
    std::string why;
    const int fd = px::open_regular(path.c_str(), st, why);
    if (fd < 0) bad(path, why.rfind("cannot open", 0) == 0 ? why + hint : why);
    return fd;
}

std::string over_limit(uint64_t limit) {
    return "declares more than " + std::to_string(limit) +
           " bytes of values; refusing to read it (raise the limit with PLEXUS_MAX_DATA_BYTES)";
}

}  // namespace plexus::data::detail
