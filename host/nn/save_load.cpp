// Block::save_parameters / load_parameters over the parameter file format.
#include "param_file.hpp"
#include "plexus/nn.hpp"

namespace plexus::nn {

void Block::save_parameters(const std::string& path) {
    std::vector<param_file::Entry> entries;
    for (auto& [name, p] : collect_params()) {
        Tensor t = p->data();
        param_file::Entry e;
        e.name = name;
        e.dtype = static_cast<int32_t>(t.dtype());
        e.shape = t.shape();
        e.data.resize(size_t(t.size()) * px_dtype_size(e.dtype));
        check(px_tensor_to_host(t.handle(), e.data.data(), e.data.size()));
        entries.push_back(std::move(e));
    }
    param_file::write_atomically(path, param_file::encode(entries));
}

void Block::load_parameters(const std::string& path, Device d) { load_parameters(path, std::vector<Device>{d}); }

void Block::load_parameters(const std::string& path, const std::vector<Device>& ds) {
    std::vector<unsigned char> bytes = param_file::read_file(path);
    std::vector<param_file::Entry> entries = param_file::decode(bytes.data(), bytes.size(), path);
    ParameterDict params = collect_params();
    // Everything is matched before any parameter changes.
    std::vector<std::pair<Parameter*, const param_file::Entry*>> plan;
    for (auto& [name, p] : params) {
        const param_file::Entry* found = nullptr;
        for (auto& e : entries)
            if (e.name == name) found = &e;
        if (!found) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, path + ": has no parameter '" + name + "'");
        bool fits = found->shape.size() == p->shape().size();
        for (size_t i = 0; fits && i < found->shape.size(); ++i)
            fits = p->shape()[i] == 0 || p->shape()[i] == found->shape[i];
        if (!fits) {
            std::string want, got;
            for (auto v : p->shape()) want += (want.empty() ? "" : ",") + (v ? std::to_string(v) : std::string("?"));
            for (auto v : found->shape) got += (got.empty() ? "" : ",") + std::to_string(v);
            throw ShapeError(PX_ERROR_SHAPE, path + ": parameter '" + name + "' has shape (" + got + ") in the file, the network needs (" + want + ")");
        }
        if (found->dtype != PX_FLOAT32 && found->dtype != PX_FLOAT64)
            throw DTypeError(PX_ERROR_DTYPE, path + ": parameter '" + name + "' is " + px_dtype_name(found->dtype) + ", not a floating dtype");
        plan.emplace_back(p, found);
    }
    for (auto& e : entries) {
        bool used = false;
        for (auto& [p, f] : plan) used = used || f == &e;
        if (!used) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, path + ": parameter '" + e.name + "' is not in the network");
    }
    // Every parameter's new replicas are made before any is swapped in, so
    // running out of memory half way loads nothing either.
    std::vector<std::vector<Tensor>> staged;
    std::vector<Shape> shapes;
    staged.reserve(plan.size());
    shapes.reserve(plan.size());
    for (auto& [p, found] : plan) {
        const param_file::Entry* e = found;  // a lambda may not capture a structured binding before C++20 (clang refuses)
        Tensor host = Tensor::wrap([&](px_tensor** o) {
            return px_tensor_from_host(runtime(), cpu().raw(), static_cast<px_dtype>(e->dtype), int32_t(e->shape.size()),
                                       e->shape.data(), e->data.data(), e->data.size(), o);
        });
        staged.push_back(p->make_replicas(host, ds));  // converted to the parameter's dtype there
        shapes.push_back(e->shape);
    }
    for (size_t i = 0; i < plan.size(); ++i) plan[i].first->adopt(std::move(shapes[i]), std::move(staged[i]));
}

}  // namespace plexus::nn
