// plexus-compare-params A B TOLERANCE: whether two parameter files hold the
// same names, dtypes and shapes, and values within TOLERANCE (absolute). For
// the equivalence tests of data-parallel training; prints the largest
// difference of each parameter.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "nn/param_file.hpp"
#include "plexus/plexus.h"

using namespace plexus::nn;

namespace {

double value(const param_file::Entry& e, size_t i) {
    if (e.dtype == PX_FLOAT32) {
        float f;
        std::memcpy(&f, e.data.data() + 4 * i, 4);
        return f;
    }
    double d;
    std::memcpy(&d, e.data.data() + 8 * i, 8);
    return d;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: plexus-compare-params A B TOLERANCE\n");
        return 2;
    }
    try {
        const double tolerance = std::atof(argv[3]);
        auto a_bytes = param_file::read_file(argv[1]), b_bytes = param_file::read_file(argv[2]);
        auto a = param_file::decode(a_bytes.data(), a_bytes.size(), argv[1]);
        auto b = param_file::decode(b_bytes.data(), b_bytes.size(), argv[2]);
        if (a.size() != b.size()) {
            std::printf("different: %zu parameters vs %zu\n", a.size(), b.size());
            return 1;
        }
        bool same = true;
        for (size_t k = 0; k < a.size(); ++k) {
            if (a[k].name != b[k].name || a[k].dtype != b[k].dtype || a[k].shape != b[k].shape ||
                (a[k].dtype != PX_FLOAT32 && a[k].dtype != PX_FLOAT64)) {
                std::printf("%s: different name, dtype or shape (or not floating point)\n", a[k].name.c_str());
                return 1;
            }
            const size_t n = a[k].data.size() / px_dtype_size(a[k].dtype);
            double worst = 0, scale = 0;
            for (size_t i = 0; i < n; ++i) {
                worst = std::fmax(worst, std::fabs(value(a[k], i) - value(b[k], i)));
                scale = std::fmax(scale, std::fabs(value(a[k], i)));
            }
            std::printf("%-10s max |a - b| = %.3g (max |a| = %.3g)\n", a[k].name.c_str(), worst, scale);
            same = same && worst <= tolerance;
        }
        std::printf(same ? "same within %g\n" : "NOT the same within %g\n", tolerance);
        return same ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "plexus-compare-params: %s\n", e.what());
        return 2;
    }
}
