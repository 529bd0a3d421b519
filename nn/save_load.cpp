// Block::save_parameters / load_parameters over the parameter file format.
#include "param_file.hpp"
#include "plexus/nn.hpp"

#include <map>
#include <set>

namespace plexus::nn {

param_file::Entry param_file::entry_of(const std::string& name, const Tensor& t) {
    param_file::Entry e;
    e.name = name;
    e.dtype = static_cast<int32_t>(t.dtype());
    e.shape = t.shape();
    e.data.resize(size_t(t.size()) * px_dtype_size(e.dtype));
    check(px_tensor_to_host(t.handle(), e.data.data(), e.data.size()));
    return e;
}

Tensor param_file::tensor_of(const Entry& e) {
    return Tensor::wrap([&](px_tensor** o) {
        return px_tensor_from_host(runtime(), cpu().raw(), static_cast<px_dtype>(e.dtype), int32_t(e.shape.size()),
                                   e.shape.data(), e.data.data(), e.data.size(), o);
    });
}

void Block::save_parameters(const std::string& path) {
    std::vector<param_file::Entry> entries;
    for (auto& [name, p] : collect_params()) entries.push_back(param_file::entry_of(name, p->data()));
    param_file::write_atomically(path, param_file::encode(entries));
}

void Block::load_parameters(const std::string& path, Device d) { load_parameters(path, std::vector<Device>{d}); }

void Block::load_parameters(const std::string& path, const std::vector<Device>& ds) {
    ParameterDict params = collect_params();
    std::set<std::string> names;
    for (auto& [name, p] : params) names.insert(name);
    // Each entry the network has goes to a CPU tensor as it is read (the
    // file's bytes are held one entry at a time); an entry it lacks is
    // remembered by name only, so a file cannot make more tensors than the
    // network has parameters.
    struct Read {
        int32_t dtype;
        Shape shape;
        Tensor host;
    };
    std::map<std::string, Read> read;
    std::string stranger;  // the first entry not in the network
    param_file::read_entries(path, [&](param_file::Entry& e) {
        if (!names.count(e.name)) {
            if (stranger.empty()) stranger = e.name;
            return;
        }
        Tensor host = param_file::tensor_of(e);
        read.emplace(e.name, Read{e.dtype, std::move(e.shape), std::move(host)});
    });
    // Everything is matched before any parameter changes.
    std::vector<std::pair<Parameter*, Read*>> plan;
    for (auto& [name, p] : params) {
        auto it = read.find(name);
        if (it == read.end()) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, path + ": has no parameter '" + name + "'");
        const Read& found = it->second;
        bool fits = found.shape.size() == p->shape().size();
        for (size_t i = 0; fits && i < found.shape.size(); ++i)
            fits = p->shape()[i] == 0 || p->shape()[i] == found.shape[i];
        if (!fits) {
            std::string want, got;
            for (auto v : p->shape()) want += (want.empty() ? "" : ",") + (v ? std::to_string(v) : std::string("?"));
            for (auto v : found.shape) got += (got.empty() ? "" : ",") + std::to_string(v);
            throw ShapeError(PX_ERROR_SHAPE, path + ": parameter '" + name + "' has shape (" + got + ") in the file, the network needs (" + want + ")");
        }
        if (px_dtype_class(found.dtype) != PX_DTYPE_CLASS_FLOAT)
            throw DTypeError(PX_ERROR_DTYPE, path + ": parameter '" + name + "' is " + px_dtype_name(found.dtype) + ", not a floating dtype");
        plan.emplace_back(p, &it->second);
    }
    if (!stranger.empty())
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   path + ": parameter '" + param_file::printable(stranger) + "' is not in the network");
    // Every parameter's new replicas are made before any is swapped in, so
    // running out of memory half way loads nothing either. A CPU copy already
    // in the parameter's dtype is its CPU replica, and one dropped once its
    // replicas exist, so the load holds about one file's worth however far
    // the device's queue lags behind.
    std::vector<std::vector<Tensor>> staged;
    staged.reserve(plan.size());
    for (auto& [p, found] : plan) {
        // Without devices: where it lives, or will once its shape is known (cpu() if never initialized).
        const std::vector<Device> where = !ds.empty()            ? ds
                                          : p->initialized()     ? p->devices()
                                          : !p->pending_.empty() ? p->pending_
                                                                 : std::vector<Device>{cpu()};
        staged.push_back(p->make_replicas(found->host, where, /*take=*/true));  // converted to the parameter's dtype there
        found->host = Tensor();
    }
    // Written into the parameters' own tensors where they match (in place, as Gluon's), else taken.
    for (size_t i = 0; i < plan.size(); ++i) plan[i].first->store(std::move(plan[i].second->shape), std::move(staged[i]));
}

}  // namespace plexus::nn
