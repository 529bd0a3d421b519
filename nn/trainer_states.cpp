// Trainer::save_states / load_states: the optimizer's state in the parameter
// file format, with the update count and the runtime's random stream.
#include <cstring>

#include "param_file.hpp"
#include "plexus/nn.hpp"

namespace plexus::nn {

namespace {
// Entries besides the per-parameter states ("<name>.state") and update
// counts ("<name>.updates", int64 (1,); files written before a parameter
// could be frozen have none, each parameter's count being the trainer's).
constexpr const char* optimizer_entry = "trainer.optimizer";  // uint8: the optimizer's name
constexpr const char* updates_entry = "trainer.updates";      // int64 (1,)
constexpr const char* random_entry = "trainer.random_state";  // int64 (2,): seed, offset (their bits)

param_file::Entry bytes_entry(const std::string& name, int32_t dtype, std::vector<int64_t> shape, const void* data,
                              size_t size) {
    param_file::Entry e;
    e.name = name;
    e.dtype = dtype;
    e.shape = std::move(shape);
    e.data.resize(size);
    std::memcpy(e.data.data(), data, size);
    return e;
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
    throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer::load_states: " + path + ": " + why);
}
}  // namespace

void Trainer::save_states(const std::string& path) const {
    std::vector<param_file::Entry> entries;
    entries.push_back(bytes_entry(optimizer_entry, PX_UINT8, {int64_t(optimizer_.size())}, optimizer_.data(),
                                  optimizer_.size()));
    entries.push_back(bytes_entry(updates_entry, PX_INT64, {1}, &updates_, sizeof updates_));
    const RandomState r = random_state();
    const uint64_t random[2] = {r.seed, r.offset};
    entries.push_back(bytes_entry(random_entry, PX_INT64, {2}, random, sizeof random));
    for (size_t k = 0; k < params_.size(); ++k) {
        if (states_[k].empty()) continue;  // not updated yet
        entries.push_back(param_file::entry_of(names_[k] + ".state", states_[k][0]));
        entries.push_back(bytes_entry(names_[k] + ".updates", PX_INT64, {1}, &counts_[k], sizeof counts_[k]));
    }
    param_file::write_atomically(path, param_file::encode(entries));
}

void Trainer::load_states(const std::string& path) {
    std::vector<param_file::Entry> entries;
    param_file::read_entries(path, [&](param_file::Entry& e) { entries.push_back(std::move(e)); });
    auto find = [&](const std::string& name) -> const param_file::Entry* {
        for (const auto& e : entries)
            if (e.name == name) return &e;
        return nullptr;
    };
    const param_file::Entry* opt = find(optimizer_entry);
    const param_file::Entry* updates = find(updates_entry);
    const param_file::Entry* random = find(random_entry);
    if (!opt || !updates || !random || opt->dtype != PX_UINT8 || updates->dtype != PX_INT64 ||
        updates->data.size() != sizeof(int64_t) || random->dtype != PX_INT64 || random->data.size() != 2 * sizeof(uint64_t))
        refuse(path, "is not a trainer state file (save_states writes one)");
    const std::string saved(opt->data.begin(), opt->data.end());
    if (saved != optimizer_)
        refuse(path, "holds the state of optimizer '" + param_file::printable(saved) + "', this trainer's is '" +
                         optimizer_ + "'");
    int64_t count = 0;
    std::memcpy(&count, updates->data.data(), sizeof count);
    if (count < 0) refuse(path, "has a negative update count");
    uint64_t stream[2];
    std::memcpy(stream, random->data.data(), sizeof stream);
    // Every state made on its parameter's devices before anything changes.
    std::vector<std::vector<Tensor>> made(params_.size());
    std::vector<int64_t> counts(params_.size(), 0);
    size_t used = 3;
    const bool two_rows = two_row_state(), stateful = keeps_state();
    for (size_t k = 0; k < params_.size(); ++k) {
        const param_file::Entry* e = find(names_[k] + ".state");
        const param_file::Entry* n = find(names_[k] + ".updates");
        if (n && !e) refuse(path, "holds an update count for " + names_[k] + " without its state");
        // No state: not updated yet (frozen in every update so far, or saved
        // before the first); its state starts at zero when it is, as Gluon's.
        if (!e) continue;
        if (!stateful) refuse(path, "holds a state for " + names_[k] + ", which this trainer (no momentum) does not keep");
        ++used;
        counts[k] = count;
        if (n) {
            ++used;
            if (n->dtype != PX_INT64 || n->data.size() != sizeof(int64_t)) refuse(path, names_[k] + ".updates is not one int64");
            std::memcpy(&counts[k], n->data.data(), sizeof(int64_t));
            // 0: its state was made for a step skipped as not finite (step_if_finite).
            if (counts[k] < 0 || counts[k] > count)
                refuse(path, names_[k] + " has " + std::to_string(counts[k]) + " updates, outside [0, " +
                                 std::to_string(count) + "]");
        }
        const std::vector<Tensor> replicas = params_[k]->list_data();
        if (replicas.empty()) refuse(path, "parameter " + names_[k] + " is not initialized");
        const Tensor& first = replicas[0];
        const Shape want = two_rows ? Shape{2, first.size()} : first.shape();
        if (e->shape != want || e->dtype != static_cast<int32_t>(first.dtype()))
            refuse(path, names_[k] + ".state has shape " + str(e->shape) + " of " +
                             (px_dtype_name(e->dtype) ? px_dtype_name(e->dtype) : "an unknown dtype") +
                             "; the parameter needs " + str(want) + " of " + name(first.dtype()));
        Tensor host = param_file::tensor_of(*e);
        for (const Tensor& r : replicas) made[k].push_back(host.copyto(r.device()));
    }
    if (used != entries.size()) refuse(path, "holds states of parameters this trainer does not have");
    states_.swap(made);
    counts_.swap(counts);
    updates_ = count;
    set_random_state(RandomState{stream[0], stream[1]});
}

}  // namespace plexus::nn
