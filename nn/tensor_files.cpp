// save_tensors / load_tensors: named tensors in the parameter file format,
// as MXNet's nd.save and nd.load.
#include <set>

#include "param_file.hpp"
#include "plexus/nn.hpp"

namespace plexus::nn {

void save_tensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& named) {
    std::set<std::string> names;
    std::vector<param_file::Entry> entries;
    entries.reserve(named.size());
    for (const auto& [name, t] : named) {
        if (name.empty() || name.size() > param_file::max_name)
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "save_tensors: a name has " + std::to_string(name.size()) +
                                                                      " bytes (1.." + std::to_string(param_file::max_name) +
                                                                      " allowed)");
        if (!names.insert(name).second)
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                       "save_tensors: the name '" + param_file::printable(name) + "' is given twice");
        if (!t.defined())
            throw InvalidArgumentError(PX_ERROR_INVALID_HANDLE, "save_tensors: the tensor named '" +
                                                                    param_file::printable(name) +
                                                                    "' is empty (default-constructed or moved from)");
        entries.push_back(param_file::entry_of(name, t));
    }
    param_file::write_atomically(path, param_file::encode(entries));
}

std::vector<std::pair<std::string, Tensor>> load_tensors(const std::string& path, Device d) {
    std::vector<std::pair<std::string, Tensor>> out;
    param_file::read_entries(path, [&](param_file::Entry& e) {
        Tensor host = param_file::tensor_of(e);
        out.emplace_back(std::move(e.name), host);
    });
    // Moved once the whole file is read and its checksum checked.
    for (auto& [name, t] : out) t = t.as_in_context(d);
    return out;
}

}  // namespace plexus::nn
