// World::disagreement: every rank's facts gathered on every rank and
// compared with rank 0's, so all ranks reach the same verdict and can stop
// together, without a collective whose sizes depend on what is compared.
#include "plexus/mpi.hpp"
#include "check_mpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>

namespace plexus::mpi {
namespace {

// name NUL value NUL, per fact.
std::string pack(const Facts& facts) {
    std::string out;
    for (const auto& [name, value] : facts) {
        out += name;
        out += '\0';
        out += value;
        out += '\0';
    }
    return out;
}

Facts unpack(const char* data, size_t n) {
    Facts out;
    std::vector<std::string> parts;
    for (size_t at = 0; at < n;) {
        const std::string part(data + at);  // each part ends with its NUL (pack)
        at += part.size() + 1;
        parts.push_back(part);
    }
    for (size_t i = 0; i + 1 < parts.size(); i += 2) out.emplace_back(parts[i], parts[i + 1]);
    return out;
}

// "" when `mine` (rank r's) matches rank 0's facts; else what differs.
std::string compare(const Facts& zero, const Facts& mine, int r) {
    const std::string rank = "rank " + std::to_string(r);
    for (size_t i = 0; i < std::max(zero.size(), mine.size()); ++i) {
        if (i >= zero.size()) return rank + " has " + mine[i].first + " '" + mine[i].second + "', which rank 0 lacks";
        if (i >= mine.size()) return "rank 0 has " + zero[i].first + " '" + zero[i].second + "', which " + rank + " lacks";
        if (zero[i].first != mine[i].first)
            return "rank 0 has " + zero[i].first + " where " + rank + " has " + mine[i].first;
        if (zero[i].second != mine[i].second)
            return zero[i].first + " differs: rank 0 has '" + zero[i].second + "', " + rank + " has '" + mine[i].second +
                   "'";
    }
    return "";
}

}  // namespace

std::string World::disagreement(const Facts& facts) {
    const std::string mine = pack(facts);
    // First every rank's length (one number each), then the bytes.
    std::vector<int64_t> lengths(size_t(size_), 0);
    int64_t my_length = int64_t(mine.size());
    ++calls_;
    MPI_Request request;
    check_mpi(MPI_Iallgather(&my_length, 1, MPI_INT64_T, lengths.data(), 1, MPI_INT64_T, MPI_COMM_WORLD, &request),
              "MPI_Iallgather");
    wait(&request, "comparing the ranks' settings (lengths)");
    // Facts are settings and sizes: 1 MiB a rank is plenty, and keeps MPI's int counts far from overflow.
    constexpr int64_t limit = int64_t(1) << 20;
    std::vector<int> counts, offsets;
    int total = 0;
    for (int r = 0; r < size_; ++r) {
        const int64_t n = lengths[size_t(r)];
        if (n > limit)  // every rank sees the same lengths, so every rank returns this
            return "cannot compare the ranks' settings: rank " + std::to_string(r) + "'s take " + std::to_string(n) +
                   " bytes, more than 1048576";
        offsets.push_back(total);
        counts.push_back(int(n));
        total += int(n);
    }
    std::vector<char> all(size_t(total) + 1, '\0');
    ++calls_;
    check_mpi(MPI_Iallgatherv(mine.data(), int(mine.size()), MPI_CHAR, all.data(), counts.data(), offsets.data(),
                              MPI_CHAR, MPI_COMM_WORLD, &request),
              "MPI_Iallgatherv");
    wait(&request, "comparing the ranks' settings");
    const Facts zero = unpack(all.data(), size_t(counts[0]));
    for (int r = 1; r < size_; ++r) {
        std::string why = compare(zero, unpack(all.data() + offsets[size_t(r)], size_t(counts[size_t(r)])), r);
        if (!why.empty()) return "the ranks disagree: " + why + " (every rank must run with the same settings, data and network)";
    }
    return "";
}

}  // namespace plexus::mpi
