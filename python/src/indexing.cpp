// x[key] and x[key] = value from Python, as NumPy's indexing: basic indexing
// (ints, slices with a positive step, '...', None) and integer-array
// indexing (lists, ranges, NumPy integer arrays and bool masks, integer
// tensors), through views and the frontend's differentiable ops.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace py = pybind11;
using plexus::DType;
using plexus::Shape;
using plexus::Tensor;

namespace {

std::string type_name(const py::handle& h) { return py::str(py::type::of(h).attr("__name__")).cast<std::string>(); }

std::string out_of_bounds(const std::string& index, int axis, int64_t n) {
    return "index " + index + " is out of bounds for axis " + std::to_string(axis) + " with size " + std::to_string(n);
}

// x[True] and x[False] (Python's or NumPy's bools): NumPy adds an axis (a
// mask of one); an int conversion would read them as rows 1 and 0, so they
// are refused.
void refuse_bool_index(const py::handle& k) {
    bool is_bool = PyBool_Check(k.ptr());
    if (!is_bool && !py::isinstance<Tensor>(k) && (py::hasattr(k, "__array_interface__") || py::hasattr(k, "__array__"))) {
        const py::object a = numpy_array(k);  // a NumPy bool, or another library's one-element tensor
        is_bool = a.attr("ndim").cast<int>() == 0 && a.attr("dtype").attr("kind").cast<std::string>() == "b";
    }
    if (is_bool)
        throw py::index_error("a bool is not an index here (NumPy reads x[True] as a new axis): index by an int, or "
                              "by a mask with where()");
}

// A single index (an int, or anything with __index__ that is an integer:
// not a 0-d float array) on an axis of length n, counted from the front.
int64_t single_index(const py::handle& k, int axis, int64_t n) {
    const py::object as_int = py::reinterpret_steal<py::object>(PyNumber_Index(k.ptr()));
    if (!as_int) {
        PyErr_Clear();
        throw py::index_error("only integers, slices, '...', None and arrays of indices are valid indices, not " +
                              py::repr(k).cast<std::string>());
    }
    int overflow = 0;
    const long long given = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
    const int64_t i = given < 0 ? given + n : given;
    if (overflow || i < 0 || i >= n) throw py::index_error(out_of_bounds(py::str(as_int).cast<std::string>(), axis, n));
    return i;
}

// An array of indices or a mask: a tensor, a list, a tuple inside the key,
// a range, or a NumPy array that is not a single number.
bool index_array(const py::handle& k) {
    if (py::isinstance<Tensor>(k) || py::isinstance<py::list>(k) || py::isinstance<py::tuple>(k) ||
        PyRange_Check(k.ptr()))
        return true;
    // NumPy's arrays, and other libraries' tensors that NumPy reads (a PyTorch tensor on the CPU).
    return (py::hasattr(k, "__array_interface__") || py::hasattr(k, "__array__")) && py::hasattr(k, "ndim") &&
           k.attr("ndim").cast<int>() > 0;
}

// One entry of an index, on t's axis `axis`: a range of places (a slice
// with a positive step, or one int when `single`), an array of indices, or
// a new axis (None).
struct Entry {
    enum Kind { range, array, new_axis } kind = range;
    int axis = 0;
    int64_t start = 0, stop = 0, step = 1;
    bool single = false;  // an int: its axis dropped (or, beside arrays, an index of its own)
    int part = 0;         // the key's part it came from (a '...' that names no axis still takes one)
    py::object host;      // array: NumPy int64 indices, in [0, n)
    Tensor indices;       // array given as a tensor: checked and counted from the front in gathered()
    Shape shape;          // array: the indices' shape
    bool reversed = false;  // range: a slice with a negative step, its places kept forwards

    bool whole(int64_t n) const { return kind == range && !single && start == 0 && stop == n && step == 1; }
};

// NumPy integer indices for an axis of length n as int64 in [0, n) (a
// negative one counting from the end), or NumPy's IndexError.
py::object checked_indices(const py::object& a, int axis, int64_t n) {
    if (a.attr("size").cast<py::ssize_t>() == 0) return a.attr("astype")("int64");
    const py::int_ lo(a.attr("min")()), hi(a.attr("max")());
    if (lo < py::int_(-n) || hi >= py::int_(n))
        throw py::index_error(out_of_bounds(py::str(py::object(hi >= py::int_(n) ? hi : lo)).cast<std::string>(), axis, n));
    py::object wide = a.attr("astype")("int64");
    if (lo < py::int_(0)) wide = py::module_::import("numpy").attr("where")(wide.attr("__lt__")(0), wide + py::int_(n), wide);
    return wide;
}

// x[k0, k1, ...] as entries, one Ellipsis standing for the axes not named.
std::vector<Entry> parse(const Shape& s, const py::tuple& key) {
    const py::module_ np = py::module_::import("numpy");
    // The axes each part names: a mask as many as it has, None and '...' none.
    std::vector<py::object> parts;
    size_t named = 0, ellipses = 0;
    for (auto k : key) {
        py::object part = py::reinterpret_borrow<py::object>(k);
        if (k.is(py::ellipsis())) {
            ++ellipses;
        } else if (k.is_none()) {
        } else if (index_array(k) && !py::isinstance<Tensor>(k)) {
            part = np.attr("asarray")(k);
            named += part.attr("dtype").attr("kind").cast<std::string>() == "b" ? part.attr("ndim").cast<size_t>() : 1;
        } else if (py::isinstance<Tensor>(k) && k.cast<Tensor>().dtype() == DType::uint8) {
            // A comparison's result (MXNet's bool): a mask, read to the host (a wait).
            const py::object values = py::cast(k.cast<Tensor>()).attr("asnumpy")();
            if (values.attr("size").cast<py::ssize_t>() > 0 && values.attr("max")().cast<int>() > 1)
                throw py::index_error("a uint8 tensor indexes as a mask of 0s and 1s (what comparisons give), and this "
                                      "one holds other values: for indices, astype('int64') first");
            part = values.attr("astype")("bool");
            named += part.attr("ndim").cast<size_t>();
        } else if (py::isinstance<Tensor>(k) && is_floating(k.cast<Tensor>().dtype())) {
            part = py::cast(k.cast<Tensor>().astype(DType::float64)).attr("asnumpy")();  // checked whole below
            ++named;
        } else {
            ++named;
        }
        parts.push_back(part);
    }
    if (ellipses > 1) throw py::index_error("an index can only have a single ellipsis ('...')");
    if (named > s.size())
        throw py::index_error("too many indices for a tensor of rank " + std::to_string(s.size()) + ": " +
                              std::to_string(named) + " were given");
    std::vector<Entry> out;
    int axis = 0;
    for (int part = 0; part < int(parts.size()); ++part) {
        const py::object& k = parts[size_t(part)];
        Entry e;
        e.axis = axis, e.part = part;
        if (k.is(py::ellipsis())) {
            for (size_t i = 0; i < s.size() - named; ++i, ++axis) {
                Entry all;
                all.axis = axis, all.stop = s[size_t(axis)], all.part = part;
                out.push_back(all);
            }
            continue;
        }
        if (k.is_none()) {
            e.kind = Entry::new_axis;
            out.push_back(e);
            continue;
        }
        refuse_bool_index(k);
        const int64_t n = s[axis];
        if (py::isinstance<py::slice>(k)) {
            py::ssize_t start = 0, stop = 0, step = 0, len = 0;
            if (!k.cast<py::slice>().compute(n, &start, &stop, &step, &len)) throw py::error_already_set();
            if (step < 0) {  // the same places forwards, read backwards (indexed() reverses them)
                const py::ssize_t last = start + (len > 0 ? (len - 1) * step : 0);
                e.start = len > 0 ? last : 0, e.stop = len > 0 ? start + 1 : 0, e.step = -step, e.reversed = len > 1;
            } else {
                e.start = start, e.stop = start + (len > 0 ? (len - 1) * step + 1 : 0), e.step = step;
            }
        } else if (py::isinstance<Tensor>(k)) {
            const Tensor t = k.cast<Tensor>();
            e.kind = Entry::array, e.indices = t.detach(), e.shape = t.shape();
        } else if (index_array(k)) {
            const std::string kind = k.attr("dtype").attr("kind").cast<std::string>();
            const bool empty = k.attr("size").cast<py::ssize_t>() == 0;
            if (kind == "b") {  // a mask: the places it holds true, one array of indices per axis it covers
                const Shape ms = k.attr("shape").cast<Shape>();
                for (size_t j = 0; j < ms.size(); ++j)
                    if (ms[j] != s[axis + j])
                        throw py::index_error("boolean index did not match indexed array along dimension " +
                                              std::to_string(axis + j) + "; dimension is " + std::to_string(s[axis + j]) +
                                              " but corresponding boolean dimension is " + std::to_string(ms[j]));
                const py::tuple places = np.attr("nonzero")(k);
                for (size_t j = 0; j < places.size(); ++j, ++axis) {
                    Entry along;
                    along.kind = Entry::array, along.axis = axis, along.part = part;
                    along.host = places[j].attr("astype")("int64");
                    along.shape = {places[j].attr("size").cast<int64_t>()};
                    out.push_back(along);
                }
                continue;
            }
            if (kind == "f" && !empty) {
                // MXNet's np.array([0, 2]) is float32, and indexes as ints: whole numbers do, as there.
                const py::object whole = np.attr("isfinite")(k).attr("__and__")(np.attr("trunc")(k).attr("__eq__")(k));
                if (!whole.attr("all")().cast<bool>())
                    throw py::index_error("an array of float indices must hold whole numbers; it holds " +
                                          py::str(k.attr("ravel")()[np.attr("argmin")(whole.attr("ravel")())])
                                              .cast<std::string>());
            } else if (kind != "i" && kind != "u" && !empty) {  // ([] is float64 to NumPy, and an index)
                throw py::index_error("arrays used as indices must be of integer, whole float or boolean type, not " +
                                      k.attr("dtype").attr("name").cast<std::string>());
            }
            e.kind = Entry::array, e.host = checked_indices(k, axis, n), e.shape = k.attr("shape").cast<Shape>();
        } else if (PyIndex_Check(k.ptr())) {
            const int64_t i = single_index(k, axis, n);
            e.start = i, e.stop = i + 1, e.single = true;
        } else {
            throw py::index_error("a tensor is indexed by ints, slices, '...', None and arrays of indices, not by a " +
                                  type_name(k));
        }
        out.push_back(e);
        ++axis;
    }
    return out;
}

// The broadcast shape of the index arrays, as NumPy's.
Shape broadcast(const std::vector<Shape>& shapes) {
    Shape out;
    for (const Shape& s : shapes) {
        if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
        for (size_t i = 0; i < s.size(); ++i) {
            int64_t& o = out[out.size() - s.size() + i];
            if (o == 1) o = s[i];
            else if (s[i] != 1 && s[i] != o) {
                std::string all;
                for (const Shape& t : shapes) all += " " + plexus::str(t);
                throw py::index_error("shape mismatch: indexing arrays could not be broadcast together with shapes" + all);
            }
        }
    }
    return out;
}

// A tensor's indices for an axis of length n, on x's device: int64 in
// [0, n) (negative ones counted from the end), or NumPy's IndexError. The
// bounds are read back: a wait for the indices.
Tensor device_indices(const Entry& e, int64_t n, const plexus::Device& d) {
    if (!e.indices.defined()) return from_numpy(e.host, d, DType::int64);
    if (!(e.indices.device() == d))
        throw plexus::DeviceMismatchError(PX_ERROR_DEVICE_MISMATCH,
                                          "x[indices]: the indices are on " + e.indices.device().str() + " and x on " +
                                              d.str() + "; copy them first (indices.as_in_context(x.device))");
    Tensor i = e.indices.dtype() == DType::int64 ? e.indices : e.indices.astype(DType::int64);
    if (i.size() == 0) return i;
    wait_devices({d});
    const auto lo = i.min().item<int64_t>(), hi = i.max().item<int64_t>();
    if (lo < -n || hi >= n) throw py::index_error(out_of_bounds(std::to_string(hi >= n ? hi : lo), e.axis, n));
    return lo < 0 ? plexus::where(i.lt(0.0), i + plexus::full(Shape{}, double(n), d, DType::int64), i) : i;
}

// b indexed by arrays on its axes `at` (one entry each, in order): the
// axes move to the front, fold into one, and its rows are taken at the
// linear indices; the result's indexed part stays where the axes were when
// they came from adjacent parts of the key, else it comes first (NumPy's
// rule: even a '...' that names no axis parts them).
Tensor gathered(const Tensor& b, const std::vector<std::pair<int, const Entry*>>& at) {
    const Shape bs = b.shape();
    std::vector<Shape> shapes;
    for (const auto& [axis, e] : at) shapes.push_back(e->shape);
    const Shape result = broadcast(shapes);
    bool adjacent = true;
    std::vector<int32_t> perm;
    std::vector<bool> indexed(bs.size(), false);
    for (size_t j = 0; j < at.size(); ++j) {
        adjacent = adjacent && (j == 0 || at[j].second->part - at[j - 1].second->part <= 1);
        perm.push_back(at[j].first);
        indexed[size_t(at[j].first)] = true;
    }
    Shape folded{1};
    for (int32_t a : perm) folded[0] *= bs[size_t(a)];
    for (size_t a = 0; a < bs.size(); ++a)
        if (!indexed[a]) perm.push_back(int32_t(a)), folded.push_back(bs[a]);
    bool moved = false;
    for (size_t a = 0; a < perm.size(); ++a) moved = moved || perm[a] != int32_t(a);
    const Tensor table = (moved ? b.transpose(perm) : b).reshape(folded);
    // The linear index of each place, in int64 (folded[0] is an element count).
    Tensor linear;
    int64_t stride = 1;
    for (size_t j = at.size(); j-- > 0;) {
        const int64_t n = bs[size_t(at[j].first)];
        Tensor term = device_indices(*at[j].second, n, b.device());
        if (stride != 1) term = term * plexus::full(Shape{}, double(stride), b.device(), DType::int64);
        linear = linear.defined() ? term + linear : term;
        stride *= n;
    }
    if (linear.shape() != result) linear = linear + plexus::zeros(result, b.device(), DType::int64);
    Tensor out = plexus::take(table, linear);
    const int first = at[0].first, q = int(result.size());
    if (!adjacent || first == 0) return out;
    std::vector<int32_t> back;  // (result, before, after) -> (before, result, after)
    for (int a = 0; a < first; ++a) back.push_back(q + a);
    for (int a = 0; a < q; ++a) back.push_back(a);
    for (int a = q + first; a < out.ndim(); ++a) back.push_back(a);
    return out.transpose(back);
}

// `out` with its axis `axis` read backwards: a take of its places (differentiable).
Tensor reversed_along(const Tensor& out, int axis) {
    Entry back;
    back.kind = Entry::array, back.axis = axis;
    const int64_t n = out.shape()[size_t(axis)];
    back.host = py::module_::import("numpy").attr("arange")(n - 1, -1, -1, py::arg("dtype") = "int64");
    back.shape = {n};
    return gathered(out, {{axis, &back}});
}

// x[k0, k1, ...]: each slice a slice_axis (a copy, differentiable), each
// int its place with the axis dropped, None a new axis, then the arrays'
// places gathered (an int beside arrays is an array of one index, as NumPy).
Tensor indexed(const Tensor& t, const py::tuple& key) {
    const std::vector<Entry> entries = parse(t.shape(), key);
    bool arrays = false;
    for (const Entry& e : entries) arrays = arrays || e.kind == Entry::array;
    const Shape s = t.shape();
    std::vector<Entry> singles;  // ints beside arrays, as arrays of one index
    singles.reserve(entries.size());
    std::vector<std::pair<int, const Entry*>> at;
    Tensor out = t;
    int axis = 0;  // in out
    for (const Entry& e : entries) {
        if (e.kind == Entry::new_axis) {
            out = plexus::expand_dims(out, axis++);
        } else if (e.kind == Entry::array) {
            at.emplace_back(axis++, &e);
        } else if (e.single && arrays) {
            Entry one = e;
            one.kind = Entry::array, one.host = py::module_::import("numpy").attr("int64")(e.start), one.shape = {};
            singles.push_back(one);
            at.emplace_back(axis++, &singles.back());
        } else {
            // Rows of the first axis are a view of x's memory, as NumPy's (x[3, :] queues no copy).
            if (e.whole(s[size_t(e.axis)])) {
            } else if (axis == 0 && e.step == 1) {
                out = out.slice(e.start, e.stop);
            } else {
                out = out.slice_axis(axis, e.start, e.stop, e.step);
            }
            if (e.reversed) out = reversed_along(out, axis);
            if (e.single) out = plexus::squeeze(out, axis);
            else ++axis;
        }
    }
    return at.empty() ? out : gathered(out, at);
}

// x[i] (a view of row i, the axis dropped) and x[a:b] (a view of rows a to
// b; with a step, a copy) along the first axis.
Tensor first_axis(const Tensor& t, const py::object& key) {
    const Shape s = t.shape();
    if (s.empty())
        throw py::index_error("too many indices for a tensor of rank 0 (a scalar): 1 was given; x[()] or x.item() "
                              "reads its value");
    const int64_t n = s[0];
    if (py::isinstance<py::slice>(key)) {
        py::ssize_t start = 0, stop = 0, step = 0, len = 0;
        if (!key.cast<py::slice>().compute(n, &start, &stop, &step, &len)) throw py::error_already_set();
        if (step == 1 || len == 0) return t.slice(start, start + len);
        if (step > 1) return t.slice_axis(0, start, start + (len - 1) * step + 1, step);
        return indexed(t, py::make_tuple(key));  // backwards: a take of its places
    }
    refuse_bool_index(key);
    if (!PyIndex_Check(key.ptr()))
        throw py::index_error("a tensor is indexed by ints, slices, '...', None and arrays of indices, not by a " +
                              type_name(key));
    const int64_t i = single_index(key, 0, n);
    Shape rest(s.begin() + 1, s.end());
    return t.slice(i, i + 1).reshape(rest);
}

// The places x[key] names, as a uint8 mask that broadcasts against x (none
// when key names every place). Arrays of indices are read to the host.
Tensor places(const Tensor& t, const py::tuple& key) {
    const Shape s = t.shape();
    const py::module_ np = py::module_::import("numpy");
    std::vector<Entry> entries = parse(s, key);
    Tensor mask;
    const auto and_mask = [&](const py::object& m) {
        const Tensor on = from_numpy(m, t.device(), DType::uint8);
        mask = mask.defined() ? mask * on : on;
    };
    std::vector<const Entry*> arrays;
    for (Entry& e : entries) {
        if (e.kind == Entry::new_axis) continue;  // names no places: the number goes where the rest name, as NumPy's
        if (e.kind == Entry::array) {
            if (e.indices.defined())
                e.host = checked_indices(py::cast(e.indices).attr("asnumpy")(), e.axis, s[size_t(e.axis)]);
            arrays.push_back(&e);
            continue;
        }
        if (e.whole(s[size_t(e.axis)])) continue;
        Shape along(s.size(), 1);
        along[size_t(e.axis)] = s[size_t(e.axis)];
        py::object on = np.attr("zeros")(py::cast(along), "uint8");
        py::list where;
        for (size_t a = 0; a < s.size(); ++a)
            where.append(int(a) == e.axis ? py::object(py::slice(py::int_(e.start), py::int_(e.stop), py::int_(e.step)))
                                          : py::object(py::int_(0)));
        on[py::tuple(where)] = 1;
        and_mask(on);
    }
    if (!arrays.empty()) {  // the places the arrays name together, over their axes
        std::vector<Shape> shapes;
        for (const Entry* e : arrays) shapes.push_back(e->shape);
        broadcast(shapes);
        Shape along(s.size(), 1);
        py::list where;
        for (size_t a = 0; a < s.size(); ++a) where.append(py::int_(0));
        for (const Entry* e : arrays) {
            along[size_t(e->axis)] = s[size_t(e->axis)];
            where[size_t(e->axis)] = e->host;
        }
        py::object on = np.attr("zeros")(py::cast(along), "uint8");
        on[py::tuple(where)] = 1;
        and_mask(on);
    }
    return mask;
}

// The places a key of ints, slices of a positive step, None and '...'
// names: a region of x (start, step and count along each axis), and x[key]'s
// shape with, for each of its axes, the axis of x it runs along (-1: a new
// axis). Keys with arrays, masks or reversed slices have none.
struct Region {
    std::vector<int64_t> start, step, count;
    Shape indexed;
    std::vector<int> along;
};

bool basic_region(const Shape& s, const py::tuple& key, Region& r) {
    for (auto k : key)
        if (!k.is_none() && !k.is(py::ellipsis()) && !py::isinstance<py::slice>(k) &&
            (!PyIndex_Check(k.ptr()) || index_array(k)))
            return false;
    const std::vector<Entry> entries = parse(s, key);
    r.start.assign(s.size(), 0), r.step.assign(s.size(), 1), r.count = s;
    int next = 0;  // the first axis no entry names
    for (const Entry& e : entries) {
        if (e.kind == Entry::new_axis) {
            r.indexed.push_back(1), r.along.push_back(-1);
            continue;
        }
        if (e.kind != Entry::range || e.reversed) return false;
        const auto a = size_t(e.axis);
        r.start[a] = e.start, r.step[a] = e.step;
        r.count[a] = e.stop > e.start ? 1 + (e.stop - e.start - 1) / e.step : 0;
        if (!e.single) r.indexed.push_back(r.count[a]), r.along.push_back(e.axis);
        next = e.axis + 1;
    }
    for (int a = next; a < int(s.size()); ++a) r.indexed.push_back(s[size_t(a)]), r.along.push_back(a);
    if (r.indexed.size() > PX_MAX_DIMS)
        throw py::index_error("the key makes " + std::to_string(r.indexed.size()) + " axes; a tensor has at most " +
                              std::to_string(PX_MAX_DIMS));
    return true;
}

// The shape of values assigned to places of shape `places`: NumPy's
// assignment drops leading axes of length 1, then broadcasts; a ValueError
// in NumPy's words when they do not.
Shape assignable(const Shape& values, const Shape& places) {
    Shape vs = values;
    while (vs.size() > places.size() && vs.front() == 1) vs.erase(vs.begin());
    bool fits = vs.size() <= places.size();
    for (size_t i = 0; fits && i < vs.size(); ++i) {
        const int64_t want = places[places.size() - vs.size() + i];
        fits = vs[i] == 1 || vs[i] == want;
    }
    if (!fits)
        throw py::value_error("x[key] = v: could not broadcast the values of shape " + plexus::str(values) +
                              " into the places' shape " + plexus::str(places));
    return vs;
}

// `values` as assignable() takes them, reshaped to the region's rank: x's
// axis the region leaves whole or steps through gets the values' length
// along it, the rest 1.
Tensor region_values(const Tensor& t, const Region& r, const Tensor& values) {
    const Shape vs = assignable(values.shape(), r.indexed);
    Shape shaped(t.shape().size(), 1);
    for (size_t i = 0; i < vs.size(); ++i) {
        const size_t at = r.indexed.size() - vs.size() + i;
        if (r.along[at] >= 0) shaped[size_t(r.along[at])] = vs[i];
    }
    return values.reshape(shaped);
}

// x[key] = values of any shape that broadcasts to x[key]'s (d2l's
// P[:, :, 0::2] = np.sin(X)): each place key names takes its value (the last
// one where an array of indices names a place twice, as NumPy's), gathered
// from the values by an index per place of x made on the host.
void assign_values(Tensor& t, const py::tuple& key, const py::object& value) {
    const py::module_ np = py::module_::import("numpy");
    const Shape s = t.shape();
    const int64_t n = t.size();
    // Each place's position in x, in the shape x[key] has: getitem's own reading of the key (on x's
    // device, where the key's tensors of indices are).
    const Tensor numbered = plexus::arange(0, double(n), 1, t.device(), DType::int64).reshape(s);
    const py::object positions = py::cast(indexed(numbered, key)).attr("asnumpy")();
    Tensor values = assigned_values(t, value);
    const py::tuple want = positions.attr("shape");
    const Shape vs = assignable(values.shape(), want.cast<Shape>());
    if (vs.size() != values.shape().size()) values = values.reshape(vs);
    const py::tuple have = py::cast(vs);
    if (positions.attr("size").cast<int64_t>() == 0) return;
    if (!(values.device() == t.device())) values = values.as_in_context(t.device());
    if (values.dtype() != t.dtype()) values = values.astype(t.dtype());
    const py::object each = np.attr("broadcast_to")(
        np.attr("arange")(values.size(), py::arg("dtype") = "int64").attr("reshape")(have), want);
    py::object from = np.attr("full")(n, -1, py::arg("dtype") = "int64");
    from[positions.attr("reshape")(-1)] = each.attr("reshape")(-1);
    const Tensor mask = from_numpy(from.attr("__ge__")(0).attr("astype")("uint8"), t.device(), DType::uint8);
    const Tensor picked = plexus::take(values.reshape({values.size()}),
                                       from_numpy(np.attr("maximum")(from, 0), t.device(), DType::int64));
    t.assign(plexus::where(mask, picked, t.reshape({n})).reshape(s));
}

// x[key] = v for a number v, or a one-element tensor: the places key names
// take it (the rest keep theirs), through a mask of them; values of another
// shape go through assign_values.
void assign_places(Tensor& t, const py::tuple& key, const py::object& value) {
    Region region;
    const bool basic = basic_region(t.shape(), key, region);
    // A number: a Python or NumPy scalar, or a one-element tensor (x[0, 0] += 1 writes one back).
    Tensor number;
    if (py::isinstance<Tensor>(value) && value.cast<Tensor>().size() == 1) {
        number = value.cast<Tensor>().reshape({}).as_in_context(t.device());
    } else if (PyNumber_Check(value.ptr()) && !py::isinstance<Tensor>(value) && py::array(value).ndim() == 0) {
        check_fits(t, value);
        const bool plain = (PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr())) && !integer_beyond_double(value);
        number = plain ? plexus::full(Shape{}, value.cast<double>(), t.device(), t.dtype())
                       : from_numpy(value, t.device(), t.dtype());  // (a complex number refused there)
    } else if (basic) {  // values into a region of x: one copy on its device
        t.assign_region(region.start, region.step, region.count, region_values(t, region, assigned_values(t, value)));
        return;
    } else {  // values: placed in the order and shape x[key] has (a reversed slice, an array)
        assign_values(t, key, value);
        return;
    }
    if (number.dtype() != t.dtype()) number = number.astype(t.dtype());
    if (basic) {
        t.assign_region(region.start, region.step, region.count, number);
        return;
    }
    const Tensor mask = places(t, key);
    t.assign(mask.defined() ? plexus::where(mask, number, t) : number);  // (no mask: every place)
}

// A 0-d integer tensor in a key is the int it holds, as NumPy reads a 0-d
// integer array (d2l's boxes[B[0], :]): one read of it, then a view, where a
// take of the places had cost tens of microseconds.
py::object plain_key(const py::object& key) {
    const auto one = [](const py::handle& k) -> py::object {
        if (py::isinstance<Tensor>(k)) {
            const Tensor& i = k.cast<const Tensor&>();
            if (i.shape().empty() && (i.dtype() == DType::int32 || i.dtype() == DType::int64)) {
                wait_devices({i.device()});
                return py::int_(i.item<int64_t>());
            }
        }
        return py::reinterpret_borrow<py::object>(k);
    };
    if (!py::isinstance<py::tuple>(key)) return one(key);
    py::list parts;
    for (auto k : key) parts.append(one(k));
    return py::tuple(parts);
}

}  // namespace

Tensor getitem(const Tensor& t, const py::object& given) {
    const py::object key = plain_key(given);
    if (key.is(py::ellipsis())) return t;
    if (py::isinstance<py::tuple>(key)) return indexed(t, key.cast<py::tuple>());
    if (key.is_none() || index_array(key)) return indexed(t, py::make_tuple(key));
    return first_axis(t, key);
}

// x[...] = v and x[:] = v write all of x; x[i] = v and x[a:b] = v the rows
// of the first axis they name (a view of x's memory); x[a, b, ...] = number
// and x[indices] = number the places they name.
void setitem(Tensor& t, const py::object& given, const py::object& value) {
    const py::object key = plain_key(given);
    Tensor target = t;
    if (py::isinstance<py::tuple>(key)) {
        assign_places(t, key.cast<py::tuple>(), value);
        return;
    }
    if (key.is_none() || index_array(key)) {
        assign_places(t, py::make_tuple(key), value);
        return;
    }
    if (py::isinstance<py::slice>(key)) {
        const Shape s = t.shape();
        if (s.empty()) throw plexus::ShapeError(PX_ERROR_SHAPE, "a scalar tensor cannot be sliced; assign x[...] = v");
        py::ssize_t start = 0, stop = 0, step = 0, len = 0;
        if (!key.cast<py::slice>().compute(s[0], &start, &stop, &step, &len)) throw py::error_already_set();
        if (step != 1 && len > 1) {  // not a view: the rows it names, through a mask
            assign_places(t, py::make_tuple(key), value);
            return;
        }
        if (len != s[0]) target = t.slice(start, start + len);
    } else if (!key.is(py::ellipsis())) {
        target = first_axis(t, key);  // an int: a view of that row
    }
    if (!target.is(t)) t.check_writable();  // a view has no autograd record: t's checks
    target.assign(assigned_values(t, value));
}
