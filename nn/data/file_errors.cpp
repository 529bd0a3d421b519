// Opening a data file and the limit's refusal, shared by the readers.
#include "file_errors.hpp"

#include "regular_file.hpp"

namespace plexus::data::detail {

int open_data_file(const std::string& path, struct stat& st) {
    std::string why;
    const int fd = px::open_regular(path.c_str(), st, why);
    if (fd < 0) bad(path, why);
    return fd;
}

namespace {
const char* const refusing = "; refusing to read it (raise the limit with PLEXUS_MAX_DATA_BYTES)";
}

std::string over_limit(uint64_t limit) { return "declares more than " + std::to_string(limit) + " bytes of values" + refusing; }

std::string over_limit(uint64_t limit, uint64_t need, uint64_t earlier) {
    return "declares " + std::to_string(need) + " bytes of values, which with the " + std::to_string(earlier) +
           " bytes of the arrays before it are more than the limit of " + std::to_string(limit) + refusing;
}

}  // namespace plexus::data::detail
