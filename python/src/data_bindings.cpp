// plexus._plexus.data and plexus._plexus.metric: the data readers, datasets,
// the loader with its transforms (data.hpp), and the metrics (metric.hpp).
// Files are read and batches made with the GIL released.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>

#include "bindings.hpp"
#include "plexus/data.hpp"
#include "plexus/metric.hpp"

namespace py = pybind11;
using plexus::Device;
using plexus::DType;
using plexus::Tensor;
namespace data = plexus::data;
namespace tf = plexus::data::transforms;

namespace {

Device or_cpu(const std::optional<Device>& d) { return d ? *d : plexus::cpu(); }

DType dtype_named(const std::string& name) {
#define PLEXUS_PY_DTYPE_NAMED_(dtype, number, dtype_name, ...) \
    if (name == #dtype_name) return DType::dtype_name;
    PX_DTYPE_TABLE(PLEXUS_PY_DTYPE_NAMED_)
#undef PLEXUS_PY_DTYPE_NAMED_
    throw plexus::DTypeError(PX_ERROR_DTYPE, "dtype '" + name + "' is not a Plexus dtype");
}

// The samples `index` of the n samples of `sample` shape and `dtype` at
// `bytes`, as an array (len(index), sample...).
data::Array samples(const uint8_t* bytes, int64_t n, DType dtype, const plexus::Shape& sample,
                    const std::vector<int64_t>& index) {
    for (int64_t i : index)
        if (i < 0 || i >= n) throw py::index_error("sample " + std::to_string(i) + " is out of range for " + std::to_string(n));
    data::Array out{dtype, {int64_t(index.size())}, {}};
    out.shape.insert(out.shape.end(), sample.begin(), sample.end());
    size_t each = px_dtype_size(static_cast<int32_t>(dtype));
    for (int64_t d : sample) each *= size_t(d);
    out.bytes.resize(index.size() * each);
    for (size_t i = 0; i < index.size(); ++i) std::memcpy(out.bytes.data() + i * each, bytes + size_t(index[i]) * each, each);
    return out;
}

// The loader's transforms from a Python list of them.
std::vector<data::Transform> transforms_of(const py::iterable& items) {
    std::vector<data::Transform> out;
    for (const py::handle& t : items) {
        if (py::isinstance<tf::RandomCrop>(t)) out.emplace_back(t.cast<tf::RandomCrop>());
        else if (py::isinstance<tf::RandomHorizontalFlip>(t)) out.emplace_back(t.cast<tf::RandomHorizontalFlip>());
        else if (py::isinstance<tf::ToTensor>(t)) out.emplace_back(t.cast<tf::ToTensor>());
        else if (py::isinstance<tf::Normalize>(t)) out.emplace_back(t.cast<tf::Normalize>());
        else
            throw py::type_error("a transform is one of plexus.data.transforms' (RandomCrop, RandomHorizontalFlip, "
                                 "ToTensor, Normalize), not " + py::repr(t).cast<std::string>());
    }
    return out;
}

// A file's tensor, read (and its values copied to the device) without the GIL.
template <class Read>
Tensor read_to(const std::optional<Device>& d, Read read) {
    GilReleased release;
    return data::to_tensor(read(), or_cpu(d));
}

void bind_files(py::module_& md) {
    md.def("default_max_data_bytes", &data::default_max_data_bytes);
    md.def("read_npy", [](const std::string& path, const std::optional<Device>& d, std::optional<uint64_t> max_bytes) {
        const uint64_t most = max_bytes.value_or(data::default_max_data_bytes());
        return read_to(d, [&] { return data::read_npy(path, most); });
    }, py::arg("path"), py::arg("device") = py::none(), py::arg("max_bytes") = py::none());
    md.def("read_npz", [](const std::string& path, const std::optional<Device>& d, std::optional<uint64_t> max_bytes) {
        const uint64_t most = max_bytes.value_or(data::default_max_data_bytes());
        std::map<std::string, Tensor> out;
        GilReleased release;
        for (const auto& [name, a] : data::read_npz(path, most)) out.emplace(name, data::to_tensor(a, or_cpu(d)));
        return out;
    }, py::arg("path"), py::arg("device") = py::none(), py::arg("max_bytes") = py::none());
    md.def("read_npz_array", [](const std::string& path, const std::string& name, const std::optional<Device>& d,
                                std::optional<uint64_t> max_bytes) {
        const uint64_t most = max_bytes.value_or(data::default_max_data_bytes());
        return read_to(d, [&] { return data::read_npz(path, name, most); });
    }, py::arg("path"), py::arg("name"), py::arg("device") = py::none(), py::arg("max_bytes") = py::none());
    md.def("read_csv", [](const std::string& path, char delimiter, int64_t skip_rows, std::vector<int64_t> columns,
                          const std::string& dtype, const std::string& comment, const std::optional<Device>& d,
                          std::optional<uint64_t> max_bytes) {
        data::CsvOptions o;
        o.delimiter = delimiter;
        o.skip_rows = skip_rows;
        o.columns = std::move(columns);
        o.dtype = dtype_named(dtype);
        if (comment.size() > 1) throw plexus::InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "read_csv: the comment is one character, or none");
        o.comment = comment.empty() ? '\0' : comment[0];
        if (max_bytes) o.max_bytes = *max_bytes;
        return read_to(d, [&] { return data::read_csv(path, o); });
    }, py::arg("path"), py::arg("delimiter") = ',', py::arg("skip_rows") = 0, py::arg("columns") = std::vector<int64_t>{},
       py::arg("dtype") = "float32", py::arg("comment") = "#", py::arg("device") = py::none(),
       py::arg("max_bytes") = py::none());
}

void bind_loader(py::module_& md) {
    py::class_<data::ImageDataset, std::shared_ptr<data::ImageDataset>>(md, "ImageDataset")
        .def("__len__", [](const data::ImageDataset& d) { return d.count; })
        .def_readonly("rows", &data::ImageDataset::rows)
        .def_readonly("cols", &data::ImageDataset::cols)
        // Its images (N, 1, rows, cols) uint8 and labels (N) int32 as a dataset of arrays (copied), for
        // a loader with transforms of one's own.
        .def("_as_arrays", [](const data::ImageDataset& d) {
            data::Array x{DType::uint8, {d.count, 1, d.rows, d.cols}, d.images};
            data::Array y{DType::int32, {d.count}, {}};
            y.bytes.resize(d.labels.size() * sizeof(int32_t));
            std::memcpy(y.bytes.data(), d.labels.data(), y.bytes.size());
            return std::make_shared<data::ArrayDataset>(std::move(x), std::move(y));
        })
        // Gluon's dataset[...] (plexus/data.py): images (len(index), rows, cols, 1) uint8 on cpu(0), labels int32.
        .def("_samples", [](const data::ImageDataset& d, const std::vector<int64_t>& index) {
            const Tensor images = data::to_tensor(samples(d.images.data(), d.count, DType::uint8, {d.rows, d.cols, 1}, index));
            std::vector<int32_t> labels(index.size());
            for (size_t i = 0; i < index.size(); ++i) labels[i] = d.labels[size_t(index[i])];
            return std::make_pair(images, labels);
        });
    md.def("default_fashion_mnist_folder", &data::default_fashion_mnist_folder,
           "Where fashion_mnist() looks without a folder: $PLEXUS_FASHION_MNIST, else Debian's dataset-fashion-mnist");
    md.def("fashion_mnist", [](bool train, const std::optional<std::string>& folder) {
        GilReleased release;
        return std::make_shared<data::ImageDataset>(
            data::fashion_mnist(train, folder.value_or(data::default_fashion_mnist_folder())));
    }, py::arg("train") = true, py::arg("folder") = py::none());
    py::class_<data::ArrayDataset, std::shared_ptr<data::ArrayDataset>>(md, "_ArrayDataset")
        .def(py::init([](const Tensor& x, const Tensor& y) {
            return std::make_shared<data::ArrayDataset>(data::to_array(x), data::to_array(y));
        }), py::arg("data"), py::arg("label"))
        .def("__len__", &data::ArrayDataset::size)
        // Gluon's dataset[...] (plexus/data.py): data and labels (len(index), ...) on cpu(0).
        .def("_samples", [](const data::ArrayDataset& d, const std::vector<int64_t>& index) {
            auto of = [&](const data::Array& a) {
                return data::to_tensor(
                    samples(a.bytes.data(), d.size(), a.dtype, plexus::Shape(a.shape.begin() + 1, a.shape.end()), index));
            };
            return std::make_pair(of(d.data), of(d.label));
        });

    py::module_ mt = md.def_submodule("transforms", "What the loader does to each sample (torchvision's names)");
    py::class_<tf::RandomCrop>(mt, "RandomCrop")
        .def(py::init([](const py::object& size, int64_t padding) {
            if (PyIndex_Check(size.ptr())) return tf::RandomCrop(py::int_(size).cast<int64_t>(), padding);  // NumPy ints too
            auto hw = size.cast<std::pair<int64_t, int64_t>>();
            return tf::RandomCrop(hw.first, hw.second, padding);
        }), py::arg("size"), py::arg("padding") = 0)
        .def_readonly("height", &tf::RandomCrop::height)
        .def_readonly("width", &tf::RandomCrop::width)
        .def_readonly("padding", &tf::RandomCrop::padding);
    py::class_<tf::RandomHorizontalFlip>(mt, "RandomHorizontalFlip")
        .def(py::init<double>(), py::arg("p") = 0.5)
        .def_readonly("p", &tf::RandomHorizontalFlip::p);
    py::class_<tf::ToTensor>(mt, "ToTensor").def(py::init<>());
    py::class_<tf::Normalize>(mt, "Normalize")
        .def(py::init([](const py::object& mean, const py::object& std) {
            // A number (a NumPy scalar too: Normalize(x.mean(), x.std())) or a sequence of them.
            auto values = [](const py::object& v) {
                if (py::isinstance<py::str>(v)) throw py::type_error("Normalize: mean and std are numbers, not text");
                const bool one = !py::isinstance<py::iterable>(v) || (py::hasattr(v, "ndim") && v.attr("ndim").cast<int>() == 0);
                std::vector<double> out;
                if (one) out.push_back(py::float_(v).cast<double>());
                else
                    for (const py::handle x : v) out.push_back(py::float_(py::reinterpret_borrow<py::object>(x)).cast<double>());
                return out;
            };
            return tf::Normalize(values(mean), values(std));
        }), py::arg("mean"), py::arg("std"))
        .def_readonly("mean", &tf::Normalize::mean)
        .def_readonly("std", &tf::Normalize::std);

    py::class_<data::DataLoader>(md, "DataLoader")
        .def(py::init([](const std::shared_ptr<data::ImageDataset>& ds, int64_t batch_size, bool shuffle,
                         const std::optional<Device>& d, uint64_t seed) {
                 return std::make_unique<data::DataLoader>(*ds, batch_size, shuffle, or_cpu(d), seed);
             }),
             py::arg("dataset"), py::arg("batch_size"), py::arg("shuffle") = false, py::arg("device") = py::none(),
             py::arg("seed") = 0, py::keep_alive<1, 2>())
        .def(py::init([](const std::shared_ptr<data::ArrayDataset>& ds, int64_t batch_size, bool shuffle,
                         const std::optional<Device>& d, uint64_t seed, const py::iterable& t) {
                 return std::make_unique<data::DataLoader>(*ds, batch_size, shuffle, or_cpu(d), seed, transforms_of(t));
             }),
             py::arg("dataset"), py::arg("batch_size"), py::arg("shuffle") = false, py::arg("device") = py::none(),
             py::arg("seed") = 0, py::arg("transforms") = py::list(), py::keep_alive<1, 2>())
        .def("__len__", &data::DataLoader::num_batches)
        .def("begin_epoch", &data::DataLoader::begin_epoch)
        .def("shard", &data::DataLoader::shard, py::arg("rank"), py::arg("shards"))
        .def_property_readonly("last_batch", [](const data::DataLoader& l) {
            return std::string(l.last_batch() == data::LastBatch::keep      ? "keep"
                               : l.last_batch() == data::LastBatch::discard ? "discard"
                                                                            : "rollover");
        })
        .def("_set_last_batch", [](data::DataLoader& l, const std::string& how) {
            if (how == "keep") l.set_last_batch(data::LastBatch::keep);
            else if (how == "discard") l.set_last_batch(data::LastBatch::discard);
            else if (how == "rollover") l.set_last_batch(data::LastBatch::rollover);
            else throw py::value_error("DataLoader: last_batch '" + how + "' is not 'keep', 'discard' or 'rollover'");
        })
        // (data, label, rows, [(top, left, flipped)] or None when no transform is random)
        .def("_next", [](data::DataLoader& l) -> py::object {
            data::Batch b;
            bool got = false;
            {
                GilReleased release;
                got = l.next(b);
            }
            if (!got) return py::none();
            py::object choices = py::none();
            if (!b.augmentations.empty()) {
                py::list c;
                for (const auto& a : b.augmentations) c.append(py::make_tuple(a.top, a.left, a.flipped));
                choices = c;
            }
            return py::make_tuple(b.data, b.label, b.rows, choices);
        });
}

void bind_metrics(py::module_& m) {
    namespace metric = plexus::metric;
    py::module_ mm = m.def_submodule("metric", "Accuracy and top-k accuracy, as mx.metric");
    py::class_<metric::EvalMetric>(mm, "EvalMetric")
        .def("update", py::overload_cast<const Tensor&, const Tensor&>(&metric::EvalMetric::update), py::arg("labels"),
             py::arg("preds"))
        .def("update", py::overload_cast<const std::vector<Tensor>&, const std::vector<Tensor>&>(&metric::EvalMetric::update),
             py::arg("labels"), py::arg("preds"))
        .def("get", [](const metric::EvalMetric& e) {
            wait_devices(e.devices());
            GilReleased release;
            return e.get();
        })
        .def("reset", &metric::EvalMetric::reset)
        .def_property_readonly("num_inst", &metric::EvalMetric::num_samples);
    py::class_<metric::Accuracy, metric::EvalMetric>(mm, "Accuracy").def(py::init<>());
    py::class_<metric::TopKAccuracy, metric::EvalMetric>(mm, "TopKAccuracy")
        .def(py::init<int64_t>(), py::arg("top_k") = 1)
        .def_property_readonly("top_k", &metric::TopKAccuracy::k);
}

}  // namespace

void bind_data(py::module_& m) {
    py::module_ md = m.def_submodule("data", "Data files, datasets and their loader");
    bind_files(md);
    bind_loader(md);
    bind_metrics(m);
}
