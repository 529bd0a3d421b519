// Block::operator() and Block::summary: a forward pass that, while a summary
// is being taken, notes each block it runs with its output shape.
#include <iomanip>
#include <set>
#include <sstream>

#include "plexus/nn.hpp"

namespace plexus::nn {

namespace {
struct Row {
    int depth = 0;
    std::string block;
    Shape output;
    int64_t params = 0;
};
struct Recorder {
    std::vector<Row> rows;
    int depth = 0;
};
thread_local Recorder* recorder = nullptr;

int64_t count(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}
}  // namespace

bool Block::summarising() { return recorder != nullptr; }

Tensor Block::operator()(const Tensor& x) {
    if (!recorder) return forward(x);
    const size_t at = recorder->rows.size();
    recorder->rows.push_back(Row{recorder->depth, "", {}, 0});
    struct Deeper {
        int& depth;
        explicit Deeper(int& d) : depth(++d) {}
        ~Deeper() { --depth; }
    } deeper(recorder->depth);
    Tensor y = forward(x);
    Row& row = recorder->rows[at];
    row.block = describe();
    row.block = row.block.substr(0, row.block.find('\n'));
    if (!row.block.empty() && row.block.back() == '(') row.block.pop_back();
    row.output = y.shape();
    for (Parameter* p : own_params()) row.params += count(p->shape());
    return y;
}

std::string Block::summary(const Tensor& x) {
    if (recorder) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "summary: already taking one on this thread");
    Recorder taken;
    recorder = &taken;
    try {
        auto predicting = autograd::pause(false);
        (*this)(x);
    } catch (...) {
        recorder = nullptr;
        throw;
    }
    recorder = nullptr;
    std::ostringstream s;
    const int width = 60;
    s << std::left << std::setw(width) << "Block" << std::setw(22) << "Output shape" << "Parameters\n";
    s << std::string(width + 32, '=') << "\n";
    s << std::setw(width) << "Input" << std::setw(22) << str(x.shape()) << 0 << "\n";
    for (const Row& r : taken.rows) {
        std::string name = std::string(size_t(2 * r.depth), ' ') + r.block;
        if (name.size() >= size_t(width)) name = name.substr(0, size_t(width) - 4) + "...";
        s << std::setw(width) << name << std::setw(22) << str(r.output) << r.params << "\n";
    }
    int64_t trainable = 0, fixed = 0;
    std::set<const Parameter*> counted;  // a block used twice shares its parameters: counted once
    for (auto& [name, p] : collect_params())
        if (counted.insert(p).second) (p->grad_req() != GradReq::null ? trainable : fixed) += count(p->shape());
    s << std::string(width + 32, '=') << "\n";
    s << "Parameters: " << trainable + fixed << " (trainable " << trainable << ", not trainable " << fixed << ")\n";
    return s.str();
}

}  // namespace plexus::nn
