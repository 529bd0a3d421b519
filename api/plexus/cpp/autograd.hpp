// plexus C++ frontend: autograd, as in the seeds.
//
//   x.attach_grad();
//   {
//       auto scope = autograd::record();   // ops inside are recorded
//       y = (x * x).sum();
//   }
//   y.backward();                          // x.grad() is 2x, on x's device
//
// Ops record only inside a record() scope and only when an input needs a
// gradient, so nothing is kept outside one. Each recorded op keeps its
// inputs alive until backward() runs (which frees the graph) or the result
// is dropped. The tape is per thread.
#pragma once

#include <algorithm>
#include <new>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "plexus/cpp/tensor.hpp"

namespace plexus::autograd {

struct Node {
    Node() = default;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
    ~Node();

    const char* op = "";
    std::vector<std::shared_ptr<Meta>> inputs;  // null where an input needs no gradient
    // What the rule reads (and the leaf inputs), detached, with the write
    // count of its memory (px_tensor_version) when the op was recorded.
    std::vector<std::pair<Tensor, uint64_t>> read;
    GradFn fn;
};

// What autograd knows about a tensor: a leaf (attach_grad) holds its
// gradient; a recorded result holds the op that made it.
struct Meta {
    bool leaf = false;
    bool accumulate = false;     // leaves with grad_req "add"
    bool fresh = false;          // leaves: backward() wrote the gradient since a Trainer step used it

    Tensor grad;                 // leaves only
    std::shared_ptr<Node> node;  // recorded results only; reset by backward()
    // Results whose records a backward() that frees this one frees too, as
    // the outputs of one op: free_with().
    std::vector<std::weak_ptr<Meta>> freed_with;
};

// Lets a chain of records go without recursing once per op (a recurrent
// layer over 60,000 steps had overflowed the stack): the inputs this node
// alone holds are taken apart here, one after the other.
// (Out of memory for that list, what is left goes the recursive way.)
inline Node::~Node() {
    try {
        std::vector<std::shared_ptr<Meta>> pending = std::move(inputs);
        while (!pending.empty()) {
            std::shared_ptr<Meta> m = std::move(pending.back());
            pending.pop_back();
            if (m && m.use_count() == 1 && m->node && m->node.use_count() == 1) {
                const std::shared_ptr<Node> next = std::move(m->node);
                for (std::shared_ptr<Meta>& in : next->inputs) pending.push_back(std::move(in));
            }
        }
    } catch (const std::bad_alloc&) {
    }
}

namespace detail {
struct State {
    bool recording = false;
    bool training = false;
};
inline State& state() {
    thread_local State s;
    return s;
}
}  // namespace detail

inline bool is_recording() noexcept { return detail::state().recording; }
// True inside record() (unless train_mode was false): dropout drops.
inline bool is_training() noexcept { return detail::state().training; }

// Sets the recording and training flags for its lifetime, then restores them.
class Scope {
public:
    Scope(bool recording, bool training) : saved_(detail::state()) {
        detail::state().recording = recording;
        detail::state().training = training;
    }
    ~Scope() { detail::state() = saved_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

private:
    detail::State saved_;
};

// `auto s = autograd::record();` records every op until s goes out of scope.
[[nodiscard]] inline Scope record(bool train_mode = true) { return Scope(true, train_mode); }
// Stops recording inside a record() scope (e.g. for an accuracy figure).
[[nodiscard]] inline Scope pause(bool train_mode = false) { return Scope(false, train_mode); }
// Training behaviour (dropout) without recording, or prediction behaviour.
[[nodiscard]] inline Scope train_mode() { return Scope(is_recording(), true); }
[[nodiscard]] inline Scope predict_mode() { return Scope(is_recording(), false); }

namespace detail {

// A leaf, or a result whose graph is still there. A result whose graph an
// earlier backward() freed is a constant to the ops recorded after it, as in
// MXNet (d2l's RNN carries its state from one batch's graph into the next).
inline bool needs_grad(const Tensor* t) {
    const std::shared_ptr<Meta>& m = t->autograd_meta();
    return m && (m->leaf || m->node);
}

inline bool wanted(std::initializer_list<const Tensor*> inputs) {
    if (!state().recording) return false;
    for (const Tensor* t : inputs)
        if (t && needs_grad(t)) return true;
    return false;
}

// record() for an op with any number of inputs (concat).
inline void record_many(Tensor& out, const std::vector<const Tensor*>& inputs, GradFn fn, const char* op,
                        std::initializer_list<Tensor> reads = {}) {
    auto node = std::make_shared<Node>();
    node->op = op;
    node->fn = std::move(fn);
    for (const Tensor& t : reads)
        if (t.defined()) node->read.emplace_back(t.detach(), t.version());
    for (const Tensor* t : inputs) {
        node->inputs.push_back(t && needs_grad(t) ? t->autograd_meta() : nullptr);
        if (t && node->inputs.back() && node->inputs.back()->leaf) node->read.emplace_back(t->detach(), t->version());
    }
    auto meta = std::make_shared<Meta>();
    meta->node = std::move(node);
    out.set_autograd_meta(std::move(meta));
}
inline void record(Tensor& out, std::initializer_list<const Tensor*> inputs, GradFn fn, const char* op,
                   std::initializer_list<Tensor> reads) {
    record_many(out, std::vector<const Tensor*>(inputs), std::move(fn), op, reads);
}

// Refuses a backward through `node` once anything its rule reads was
// written in place since it was recorded (through any handle or view).
inline void check_unwritten(const Node& node) {
    for (const auto& [t, version] : node.read)
        if (t.version() != version)
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                       std::string("backward: a tensor that ") + node.op +
                                           " read while recording has been written in place since (assign, x[:] = v, "
                                           "a Trainer's step, through it, a view of it or its detach()), and its "
                                           "gradient would use the new values; record the computation again after "
                                           "the write");
}

inline void no_gradient(std::initializer_list<const Tensor*> inputs, const char* op) {
    if (wanted(inputs))
        throw UnsupportedError(PX_ERROR_UNSUPPORTED, std::string("autograd: ") + op +
                                                         " has no gradient yet; call it on x.detach(), or outside record()");
}

}  // namespace detail

// The records of `others` go when `result`'s does (a backward() without
// retain_graph that runs through `result`), as if one op had made them all:
// a recurrent layer's final states with its output, so that the states,
// carried into the next batch, are constants there as the output's
// history is gone (MXNet's fused RNN op frees them together).
inline void free_with(const Tensor& result, const std::vector<Tensor>& others) {
    const std::shared_ptr<Meta>& m = result.autograd_meta();
    if (!m || !m->node) return;
    for (const Tensor& t : others)
        if (t.autograd_meta() && t.autograd_meta()->node && t.autograd_meta() != m)
            m->freed_with.push_back(t.autograd_meta());
}
}  // namespace plexus::autograd

namespace plexus {

inline void Tensor::attach_grad(const std::string& grad_req) {
    DType d = dtype();
    if (!is_floating(d))
        throw DTypeError(PX_ERROR_DTYPE, std::string("attach_grad: gradients need a floating dtype, this tensor is ") +
                                             name(d));
    if (grad_req != "write" && grad_req != "add")
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "attach_grad: grad_req '" + grad_req + "' is not \"write\" or \"add\"");
    auto meta = std::make_shared<autograd::Meta>();
    meta->leaf = true;
    meta->accumulate = grad_req == "add";
    meta->grad = full(shape(), 0.0, device(), d);
    meta_ = std::move(meta);
}

inline void Tensor::check_writable() const {
    if (meta_ && meta_->node)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "assign: this tensor is a recorded result whose graph backward() has not used; "
                                   "call backward() first, or assign to a copy");
    // As MXNet: while recording, only a tensor in a graph is refused (a tensor
    // a recorded rule reads and that is written later makes that backward()
    // refuse, by its version).
    if (meta_ && meta_->leaf && autograd::is_recording())
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "assign: a tensor with attach_grad() cannot be written in place while autograd "
                                   "records (the recorded ops would read the new values); assign outside record(), "
                                   "or under pause()");
}

namespace autograd::detail {
// Values written in place while recording must not need a gradient: the
// write records none, and would drop it silently.
inline void check_values_unrecorded(const Tensor& values) {
    if (wanted({&values}))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "assign: the values need a gradient (they come from a tensor with attach_grad() "
                                   "while autograd records), which a write in place does not record; compute the "
                                   "tensor with ops (where, concat, stack) instead, or write under pause()");
}
}  // namespace autograd::detail

inline Tensor& Tensor::assign(const Tensor& values) {
    check_writable();
    autograd::detail::check_values_unrecorded(values);
    Tensor v = values.as_in_context(device());
    if (v.dtype() != dtype()) v = v.astype(dtype());
    if (v.is(*this)) return *this;
    const Shape s = shape();
    try {  // NumPy's broadcasting, the whole tensor as the region (values sharing its memory read first)
        return assign_region(std::vector<int64_t>(s.size(), 0), std::vector<int64_t>(s.size(), 1), s, v);
    } catch (const ShapeError&) {
        throw ShapeError(PX_ERROR_SHAPE, "assign: values of shape " + str(values.shape()) +
                                             " do not broadcast to the tensor's shape " + str(s));
    }
}

inline Tensor& Tensor::assign_region(const std::vector<int64_t>& start, const std::vector<int64_t>& step,
                                     const std::vector<int64_t>& count, const Tensor& values) {
    check_writable();
    const size_t nd = shape().size();
    if (start.size() != nd || step.size() != nd || count.size() != nd)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "assign_region: start, step and count must each hold one value per axis of the "
                                   "tensor (" + std::to_string(nd) + "); they hold " + std::to_string(start.size()) +
                                       ", " + std::to_string(step.size()) + " and " + std::to_string(count.size()));
    autograd::detail::check_values_unrecorded(values);
    const Tensor v = values.dtype() == dtype() ? values : values.astype(dtype());
    check(px_tensor_assign_region(need(), start.data(), step.data(), count.data(), v.need()));
    return *this;
}

inline Tensor& Tensor::assign(double value) { return assign(full(shape(), value, device(), dtype())); }

inline Tensor Tensor::grad() const {
    if (!meta_ || !meta_->leaf)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "grad: this tensor has no gradient; call attach_grad() on it before recording");
    return meta_->grad;
}

inline void Tensor::backward() const { backward(Tensor()); }

inline void Tensor::backward(const Tensor& head, bool retain_graph) const {
    using autograd::Meta;
    if (!meta_ || (!meta_->leaf && !meta_->node))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "backward: nothing was recorded for this tensor; compute it inside autograd::record() "
                                   "from a tensor with attach_grad() (a result whose record an earlier backward() freed "
                                   "is a constant: keep that record with retain_graph), and call backward() only once");
    Tensor seed_grad = head.defined() ? head : full(shape(), 1.0, device(), dtype());
    if (head.defined() && head.shape() != shape())
        throw ShapeError(PX_ERROR_SHAPE, "backward: the head gradient's shape does not match the tensor's");
    // Checked before the graph is used: a head another op refuses halfway
    // would leave some gradients written and the graph gone.
    if (head.defined() && head.dtype() != dtype())
        throw DTypeError(PX_ERROR_DTYPE, std::string("backward: the head gradient is ") + name(head.dtype()) +
                                             " and the tensor " + name(dtype()) + "; they must be the same");
    if (head.defined() && head.device() != device())
        throw DeviceMismatchError(PX_ERROR_DEVICE_MISMATCH, "backward: the head gradient is on " + head.device().str() +
                                                                 " and the tensor on " + device().str() +
                                                                 "; move it with as_in_context()");
    // Order the graph so that every node runs after all the nodes that use
    // its result. `order` owns the metas: nodes are freed as backward goes.
    std::vector<std::shared_ptr<Meta>> order;
    std::unordered_set<Meta*> seen;
    std::vector<std::pair<std::shared_ptr<Meta>, size_t>> stack{{meta_, 0}};
    seen.insert(meta_.get());
    while (!stack.empty()) {
        Meta* m = stack.back().first.get();
        if (!m->leaf && !m->node)  // checked before any gradient is written
            throw InvalidArgumentError(
                PX_ERROR_INVALID_ARGUMENT,
                "backward: part of this graph was freed by an earlier backward() (a result this one and an "
                "earlier one both go back through); pass retain_graph (true; retain_graph=True in Python) to "
                "the earlier backward(), or call backward() once on the sum of the losses");
        size_t next = stack.back().second;
        if (m->node && next == 0) autograd::detail::check_unwritten(*m->node);
        if (m->node && next < m->node->inputs.size()) {
            ++stack.back().second;
            const std::shared_ptr<Meta>& in = m->node->inputs[next];
            if (in && seen.insert(in.get()).second) stack.push_back({in, 0});
            continue;
        }
        order.push_back(std::move(stack.back().first));
        stack.pop_back();
    }
    std::vector<std::weak_ptr<Meta>> tied;  // freed after the walk: one may still be ahead in `order`
    std::unordered_map<Meta*, Tensor> grads;
    grads[meta_.get()] = seed_grad;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Meta* m = it->get();
        auto g = grads.find(m);
        if (g == grads.end()) continue;  // no path from the head reached it
        if (m->leaf) {
            // A copy: a rule may pass its gradient through (add's to both
            // operands, the head itself), and two leaves must not share one.
            auto pause = autograd::pause();
            m->grad = m->accumulate ? m->grad + g->second : g->second.copyto(g->second.device());
            m->fresh = true;
            continue;
        }
        // Frees the graph as it goes, unless it is kept for another backward().
        std::shared_ptr<autograd::Node> node = retain_graph ? m->node : std::move(m->node);
        if (!retain_graph) tied.insert(tied.end(), m->freed_with.begin(), m->freed_with.end());
        std::vector<Tensor> in_grads;
        {
            auto pause = autograd::pause();
            in_grads = node->fn(g->second);
        }
        grads.erase(g);
        for (size_t i = 0; i < node->inputs.size() && i < in_grads.size(); ++i) {
            Meta* in = node->inputs[i].get();
            if (!in || !in_grads[i].defined()) continue;
            auto [slot, fresh] = grads.try_emplace(in, in_grads[i]);
            if (!fresh) slot->second = slot->second + in_grads[i];
        }
    }
    for (const std::weak_ptr<Meta>& weak : tied)
        if (std::shared_ptr<Meta> other = weak.lock()) other->node.reset();
}

}  // namespace plexus
