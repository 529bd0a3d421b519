// max, min and argmax over one long run split over an OpenMP team, when
// OpenMP gives a smaller team than the plugin asked for: run with
// OMP_NUM_THREADS=4 and OMP_THREAD_LIMIT=1 (tests/plugins/cpu/CMakeLists.txt),
// the extremes in the last quarter, which a team of one searched no part of.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "plexus/plexus.hpp"

int main() {
    const int64_t n = int64_t(1) << 18;
    std::vector<float> v(static_cast<size_t>(n), 0.0f);
    v[static_cast<size_t>(n - 5)] = 7.0f;
    v[static_cast<size_t>(n - 3)] = -2.0f;
    const plexus::Tensor x = plexus::array(v);
    const int64_t argmax = x.argmax().item<int64_t>();
    const float max = x.max().item<float>(), min = x.min().item<float>();
    std::printf("argmax %lld (want %lld), max %g (want 7), min %g (want -2)\n", static_cast<long long>(argmax),
                static_cast<long long>(n - 5), double(max), double(min));
    return argmax == n - 5 && max == 7.0f && min == -2.0f ? 0 : 1;
}
