// Gradients summed on the devices: when every rank's device offers process
// groups (plugin ABI 1.3), the ranks join one group through MPI (rank 0
// makes the id and broadcasts it) and the gradients' sum runs in the plugin
// (NCCL between GPUs) instead of through host memory.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "plexus/mpi.hpp"
#include "check_mpi.hpp"

namespace plexus::mpi {

namespace {

// What rank 0 sends after making the id: whether it could, and the id.
struct IdMessage {
    int32_t status = PX_OK;
    px_group_id id{};
};

// The gradients of one dtype, end to end in one flat tensor: one collective
// per dtype, and gradients that share memory are summed once each.
Tensor flatten(const std::vector<const Tensor*>& parts) {
    std::vector<Tensor> flat;
    flat.reserve(parts.size());
    for (const Tensor* t : parts) flat.push_back(t->reshape({t->size()}));
    return flat.size() == 1 ? flat[0].copyto(flat[0].device()) : concat(flat);
}

}  // namespace

void World::join_group(const Device& device) {
    if (size_ == 1) {
        reducer_ = "none (one rank)";
        return;
    }
    // Every rank's device must be of rank 0's plugin and offer groups.
    const std::string plugin = plugin_of(device);
    int32_t offers = 0;
    check(px_group_supported(runtime(), device.raw(), &offers));
    char lead_plugin[sizeof(px_group_id::plugin)] = {};
    if (rank_ == 0) std::snprintf(lead_plugin, sizeof lead_plugin, "%s", plugin.c_str());
    ++calls_;
    MPI_Request request;
    check_mpi(MPI_Ibcast(lead_plugin, int(sizeof lead_plugin), MPI_BYTE, 0, MPI_COMM_WORLD, &request), "MPI_Ibcast");
    wait(&request, "agreeing on how to sum the gradients");
    std::vector<double> able{offers && plugin == lead_plugin ? 1.0 : 0.0};
    all_reduce_sum(able, "agreeing on how to sum the gradients");
    if (able[0] < size_) {
        reducer_ = "MPI through host memory (" + std::to_string(size_ - int(able[0])) + " of " +
                   std::to_string(size_) + " ranks have no " + lead_plugin + " device with process groups)";
        return;
    }
    IdMessage message;
    std::string why;
    if (rank_ == 0) {
        try {
            message.id = make_group_id(device);
        } catch (const Error& e) {
            message.status = e.status();
            why = e.what();
        }
    }
    ++calls_;
    check_mpi(MPI_Ibcast(&message, int(sizeof message), MPI_BYTE, 0, MPI_COMM_WORLD, &request), "MPI_Ibcast");
    wait(&request, "sending the group id");
    if (message.status != PX_OK) {  // e.g. NCCL missing: MPI can still do it
        reducer_ = "MPI through host memory (rank 0 could not make a " + std::string(lead_plugin) + " group" +
                   (why.empty() ? ")" : ": " + why + ")");
        return;
    }
    try {
        group_ = std::make_unique<ProcessGroup>(device, message.id, rank_, size_, timeout_);
    } catch (const Error& e) {
        abort(std::string("joining the gradients' process group failed: ") + e.what(), 3);
    }
    reducer_ = "the " + plugin + " plugin's process group on the devices (rank 0 on " + device.str() + ")";
}

nn::Trainer::GradientHook World::gradient_reducer(const Device& given) {
    const Device device = resolve(given);  // the name the gradients carry (naive(0) for accel(0))
    if (group_)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "mpi::World: gradient_reducer(device) was already called (a World joins one "
                                   "process group): give the hook it returned to every Trainer");
    join_group(device);
    if (!group_) return gradient_reducer();
    return [this, device](std::vector<Tensor>& grads) {
        std::map<px_dtype, std::vector<const Tensor*>> by_dtype;
        for (const Tensor& g : grads) {
            if (g.device() != device)
                throw DeviceMismatchError(PX_ERROR_DEVICE_MISMATCH, "mpi::World: the gradients are summed on " +
                                                                        device.str() + ", but one is on " + g.device().str());
            by_dtype[static_cast<px_dtype>(g.dtype())].push_back(&g);
        }
        std::map<const Tensor*, Tensor> summed;
        for (auto& [dtype, parts] : by_dtype) {
            Tensor flat = flatten(parts);
            group_->all_reduce_sum({flat});
            int64_t at = 0;
            for (const Tensor* t : parts) {
                summed[t] = flat.slice(at, at + t->size()).reshape(t->shape());
                at += t->size();
            }
        }
        for (Tensor& g : grads) g = summed.at(&g);
    };
}

}  // namespace plexus::mpi
