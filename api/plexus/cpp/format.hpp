// plexus C++ frontend: NumPy-style text for tensor values ("[1. 2. 3.]",
// "[ 21.085537  56.59815  151.41316 ]"): the shortest digits that read back
// as the same value, integer and fraction parts aligned, long tensors
// summarized with "...".
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace plexus::format {

// A value rounded to a dtype's precision (float32's, float16's, ...), as the
// tensor's values are: identity for float64.
using Rounding = std::function<double(double)>;

// Shortest "%.*e" digits that read back as `v` once rounded to the tensor's precision.
inline int unique_digits(double v, const Rounding& round) {
    char buf[64];
    for (int p = 0; p < 17; ++p) {
        std::snprintf(buf, sizeof buf, "%.*e", p, v);
        if (round(std::strtod(buf, nullptr)) == v) return p;
    }
    return 17;
}

struct Cell {
    std::string left, right;  // split at the point (or the whole text in `left`)
    bool whole = false;       // nan, inf: right-aligned in the finite values' full width, as NumPy does
};

// Formats every value; all cells then share widths.
inline std::vector<Cell> float_cells(const std::vector<double>& vals, const Rounding& round) {
    double max_abs = 0, min_abs = INFINITY;
    for (double v : vals) {
        if (!std::isfinite(v)) continue;
        double a = std::fabs(v);
        max_abs = std::max(max_abs, a);
        if (a > 0) min_abs = std::min(min_abs, a);
    }
    bool sci = max_abs >= 1e8 || (min_abs < 1e-4) || (min_abs != INFINITY && max_abs / min_abs > 1e3);
    std::vector<Cell> cells;
    char buf[64];
    int sci_digits = 0;  // in scientific mode every mantissa gets the same digits, as NumPy prints
    if (sci)
        for (double v : vals)
            if (std::isfinite(v)) sci_digits = std::max(sci_digits, unique_digits(v, round));
    for (double v : vals) {
        if (std::isnan(v)) { cells.push_back({"nan", "", true}); continue; }
        if (std::isinf(v)) { cells.push_back({v > 0 ? "inf" : "-inf", "", true}); continue; }
        int p = unique_digits(v, round);
        if (sci) {
            std::snprintf(buf, sizeof buf, "%.*e", sci_digits, v);
        } else {
            int exp10 = v == 0 ? 0 : static_cast<int>(std::floor(std::log10(std::fabs(v))));
            int frac = std::max(0, p - exp10);
            std::snprintf(buf, sizeof buf, "%.*f", frac, v);
            // trim zeros the digit count did not need
            std::string s = buf;
            if (s.find('.') != std::string::npos) {
                while (s.back() == '0') s.pop_back();
            }
            std::snprintf(buf, sizeof buf, "%s", s.c_str());
        }
        std::string s = buf;
        size_t dot = s.find('.');
        if (dot == std::string::npos) {
            size_t e = s.find('e');
            if (e == std::string::npos) cells.push_back({s + ".", ""});
            else cells.push_back({s.substr(0, e) + ".", s.substr(e)});
        } else {
            cells.push_back({s.substr(0, dot + 1), s.substr(dot + 1)});
        }
    }
    return cells;
}

inline std::vector<Cell> int_cells(const std::vector<long long>& vals) {
    std::vector<Cell> cells;
    cells.reserve(vals.size());
    for (long long v : vals) cells.push_back({std::to_string(v), ""});
    return cells;
}

// Pads cells to common widths: left parts right-aligned, right parts
// left-aligned; a whole cell (nan, inf) widens the left parts when it is
// longer than the finite values and is right-aligned in the full width.
inline std::vector<std::string> align(const std::vector<Cell>& cells) {
    size_t wl = 0, wr = 0;
    for (const auto& c : cells)
        if (!c.whole) wl = std::max(wl, c.left.size()), wr = std::max(wr, c.right.size());
    for (const auto& c : cells)
        if (c.whole && c.left.size() > wr) wl = std::max(wl, c.left.size() - wr);
    std::vector<std::string> out;
    for (const auto& c : cells) {
        if (c.whole) out.push_back(std::string(wl + wr - std::min(wl + wr, c.left.size()), ' ') + c.left);
        else out.push_back(std::string(wl - c.left.size(), ' ') + c.left + c.right + std::string(wr - c.right.size(), ' '));
    }
    return out;
}

// Which indices of an axis of length n are shown (-1 stands for "...").
inline std::vector<long long> shown(long long n, bool summarize) {
    std::vector<long long> idx;
    if (summarize && n > 6) {
        for (long long i = 0; i < 3; ++i) idx.push_back(i);
        idx.push_back(-1);
        for (long long i = n - 3; i < n; ++i) idx.push_back(i);
    } else {
        for (long long i = 0; i < n; ++i) idx.push_back(i);
    }
    return idx;
}

// Nested brackets over `texts`, the aligned texts of the shown elements in
// row-major order of the shown indices.
inline void nest(std::string& out, const std::vector<long long>& shape, size_t axis, bool summarize,
                 const std::vector<std::string>& texts, size_t& next, size_t indent) {
    out += '[';
    auto idx = shown(shape[axis], summarize);
    const size_t width = 75;
    size_t line_start = out.rfind('\n');
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    for (size_t k = 0; k < idx.size(); ++k) {
        if (axis + 1 == shape.size()) {
            std::string item = idx[k] < 0 ? "..." : texts[next++];
            if (k > 0) {
                if (out.size() - line_start + 1 + item.size() + 1 > width) {
                    out += '\n' + std::string(indent + 1, ' ');
                    line_start = out.size() - indent - 1;
                } else {
                    out += ' ';
                }
            }
            out += item;
        } else {
            if (k > 0) out += std::string(shape.size() - axis - 1, '\n') + std::string(indent + 1, ' ');
            if (idx[k] < 0) {
                out += "...";
                continue;
            }
            nest(out, shape, axis + 1, summarize, texts, next, indent + 1);
        }
    }
    out += ']';
}

}  // namespace plexus::format
