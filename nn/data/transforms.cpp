// The loader's transforms: crops and flips move raw values (any dtype, as
// bytes); ToTensor and Normalize fold into one per-channel affine map that
// also converts to the batch's dtype.
#include "transforms.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <type_traits>

namespace plexus::data::detail {
namespace {

[[noreturn]] void bad(const std::string& why) { throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, why); }

// splitmix64: a counter-based generator, the same numbers on every platform
// (the standard distributions are not).
struct SplitMix {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    int64_t below(int64_t n) { return int64_t(next() % uint64_t(n)); }  // n <= 2^40 or so: no visible bias
    double uniform() { return double(next() >> 11) * 0x1p-53; }
};

// 1.5, 0, -1, inf: as a user wrote the number (std::to_string gives 0.000000).
std::string number(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

const char* name_of(const Transform& t) {
    static const char* const names[] = {"RandomCrop", "RandomHorizontalFlip", "ToTensor", "Normalize"};
    return names[t.index()];
}

// (C, H, W) of an image sample, (1, H, W) for (H, W).
void image_dims(const Shape& s, const char* who, int64_t& c, int64_t& h, int64_t& w) {
    if (s.size() != 2 && s.size() != 3)
        bad(std::string(who) + " needs images (C, H, W) or (H, W); the samples are " + str(s));
    c = s.size() == 3 ? s[0] : 1;
    h = s[s.size() - 2];
    w = s[s.size() - 1];
}

template <class T>
T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// dst[i] = Out(raw / divisor[c] - shift[c]) over `channels` planes of `plane` values.
template <class In, class Out>
void affine(const uint8_t* src, uint8_t* dst, int64_t channels, int64_t plane, const std::vector<double>& divisor,
            const std::vector<double>& shift) {
    using Calc = std::conditional_t<std::is_same_v<Out, double>, double, float>;
    for (int64_t c = 0; c < channels; ++c) {
        const Calc scale = Calc(1.0 / divisor[size_t(c)]), sub = Calc(shift[size_t(c)]);
        for (int64_t i = c * plane; i < (c + 1) * plane; ++i) {
            const Out v = Out(Calc(load<In>(src + i * int64_t(sizeof(In)))) * scale - sub);
            std::memcpy(dst + i * int64_t(sizeof(Out)), &v, sizeof v);
        }
    }
}

}  // namespace

uint64_t sample_key(uint64_t seed, uint64_t epoch, int64_t position) {
    SplitMix g{seed};
    g.state ^= g.next() + epoch;
    g.state ^= g.next() + uint64_t(position);
    return g.next();
}

std::shared_ptr<const Pipeline> Pipeline::make(const std::vector<Transform>& transforms, DType dtype,
                                               const Shape& sample) {
    auto p = std::make_shared<Pipeline>();
    p->in_dtype = p->out_dtype = dtype;
    p->in_sample = p->out_sample = sample;
    if (sample.size() == 3) p->channels_ = sample[0];
    p->divisor_.assign(size_t(p->channels_), 1.0);
    p->shift_.assign(size_t(p->channels_), 0.0);
    // Samples (H, W, C), as Gluon's and d2l's image data sets give them,
    // would be read as H channels of W x C: refused, since Gluon's and
    // torchvision's ToTensor move the channels first and this one does not.
    // Told apart by shape: a gray or colour image (C of 1 or 3) whose height
    // and width are both above 4, unless a Normalize names a mean per
    // channel of the first axis.
    bool per_first_axis = false;
    for (const Transform& t : transforms)
        if (const auto* n = std::get_if<transforms::Normalize>(&t))
            per_first_axis = per_first_axis || (n->mean.size() > 1 && int64_t(n->mean.size()) == sample[0]);
    if (!transforms.empty() && sample.size() == 3 && sample[0] > 4 && sample[1] > 4 &&
        (sample[2] == 1 || sample[2] == 3) && !per_first_axis)
        bad(std::string(name_of(transforms[0])) + ": the samples are " + str(sample) +
            ", images laid out (H, W, C); the loader's transforms take (C, H, W) or (H, W) images and move "
            "no axis (Gluon's ToTensor would): give the data as (N, C, H, W), e.g. NumPy's "
            "x.transpose(0, 3, 1, 2)");
    bool scaled = false;
    const char* value_transform = nullptr;  // the first ToTensor or Normalize
    for (const Transform& t : transforms) {
        if (const auto* crop = std::get_if<transforms::RandomCrop>(&t)) {
            int64_t c = 0, h = 0, w = 0;
            image_dims(p->out_sample, "RandomCrop", c, h, w);
            if (crop->height < 1 || crop->width < 1 || crop->padding < 0)
                bad("RandomCrop: the size must be at least 1x1 and the padding >= 0, got " +
                    std::to_string(crop->height) + "x" + std::to_string(crop->width) + " with padding " +
                    std::to_string(crop->padding));
            if (crop->height > h + 2 * crop->padding || crop->width > w + 2 * crop->padding)
                bad("RandomCrop: a " + std::to_string(crop->height) + "x" + std::to_string(crop->width) +
                    " crop does not fit in a " + std::to_string(h) + "x" + std::to_string(w) + " image padded by " +
                    std::to_string(crop->padding));
            p->geometry_.push_back({true, crop->height, crop->width, crop->padding, 0});
            p->out_sample[p->out_sample.size() - 2] = crop->height;
            p->out_sample[p->out_sample.size() - 1] = crop->width;
        } else if (const auto* flip = std::get_if<transforms::RandomHorizontalFlip>(&t)) {
            int64_t c = 0, h = 0, w = 0;
            image_dims(p->out_sample, "RandomHorizontalFlip", c, h, w);
            if (!(flip->p >= 0 && flip->p <= 1))
                bad("RandomHorizontalFlip: p must be in [0, 1], got " + number(flip->p));
            p->geometry_.push_back({false, 0, 0, 0, flip->p});
        } else if (std::holds_alternative<transforms::ToTensor>(t)) {
            if (value_transform)
                bad(std::string("ToTensor after ") + value_transform + ": ToTensor comes once, before Normalize");
            if (dtype == DType::uint8) p->divisor_.assign(p->divisor_.size(), 255.0);
            value_transform = "ToTensor";
            scaled = true;
        } else {
            const auto& n = std::get<transforms::Normalize>(t);
            const size_t channels = size_t(p->channels_);
            if (n.mean.size() != n.std.size() || (n.mean.size() != 1 && n.mean.size() != channels))
                bad("Normalize: " + std::to_string(n.mean.size()) + " means and " + std::to_string(n.std.size()) +
                    " stds for samples " + str(sample) + " of " + std::to_string(channels) +
                    " channel(s): give one of each, or one per channel");
            for (size_t c = 0; c < channels; ++c) {
                const double m = n.mean[n.mean.size() == 1 ? 0 : c], s = n.std[n.std.size() == 1 ? 0 : c];
                if (!(s > 0) || !std::isfinite(s))
                    bad("Normalize: std must be > 0 and finite, got " + number(s) + " for channel " +
                        std::to_string(c));
                if (!std::isfinite(m)) bad("Normalize: the mean of channel " + std::to_string(c) + " is not finite");
                p->shift_[c] = (p->shift_[c] + m) / s;
                p->divisor_[c] *= s;
            }
            value_transform = value_transform ? value_transform : "Normalize";
            scaled = true;
        }
        if (t.index() < 2 && value_transform)
            bad(std::string(name_of(t)) + " after " + value_transform +
                ": crops and flips act on the raw values, so they come first");
    }
    p->affine_ = scaled;
    if (scaled && dtype == DType::uint8) p->out_dtype = DType::float32;
    p->random = !p->geometry_.empty();
    return p;
}

Augmentation Pipeline::apply(const uint8_t* src, uint8_t* dst, uint64_t key) const {
    const int64_t es = int64_t(px_dtype_size(static_cast<int32_t>(in_dtype)));
    Augmentation chose;
    SplitMix g{key};
    // Crops and flips, one after another, on scratch buffers of raw values.
    thread_local std::vector<uint8_t> scratch[2];
    const uint8_t* cur = src;
    int which = 0;
    int64_t c = 1, h = 1, w = 1;
    if (!geometry_.empty()) image_dims(in_sample, "", c, h, w);
    for (const Geometry& step : geometry_) {
        std::vector<uint8_t>& out = scratch[which];
        which ^= 1;
        if (step.crop) {
            const int64_t top = g.below(h + 2 * step.padding - step.height + 1);
            const int64_t left = g.below(w + 2 * step.padding - step.width + 1);
            chose.top = top;
            chose.left = left;
            out.assign(size_t(c * step.height * step.width * es), 0);  // the padding: zeros
            // Output x takes source column x + left - padding where that lies in [0, w).
            const int64_t x0 = std::max<int64_t>(0, step.padding - left);
            const int64_t x1 = std::min<int64_t>(step.width, w + step.padding - left);
            for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t y = 0; y < step.height; ++y) {
                    const int64_t sy = y + top - step.padding;
                    if (sy < 0 || sy >= h || x1 <= x0) continue;
                    std::memcpy(out.data() + ((ch * step.height + y) * step.width + x0) * es,
                                cur + ((ch * h + sy) * w + x0 + left - step.padding) * es, size_t((x1 - x0) * es));
                }
            h = step.height;
            w = step.width;
        } else {
            const bool flip = g.uniform() < step.p;
            chose.flipped = flip;
            out.resize(size_t(c * h * w * es));
            for (int64_t row = 0; row < c * h; ++row)
                for (int64_t x = 0; x < w; ++x)
                    std::memcpy(out.data() + (row * w + x) * es, cur + (row * w + (flip ? w - 1 - x : x)) * es,
                                size_t(es));
        }
        cur = out.data();
    }
    int64_t n = 1;
    for (int64_t d : out_sample) n *= d;
    if (n == 0) return chose;  // (memcpy takes no null pointer, even for 0 bytes)
    if (!affine_) {
        std::memcpy(dst, cur, size_t(n * es));
        return chose;
    }
    const int64_t plane = channels_ > 0 ? n / channels_ : 0;
    switch (in_dtype) {
    case DType::uint8: affine<uint8_t, float>(cur, dst, channels_, plane, divisor_, shift_); break;
    case DType::float16: affine<float16, float16>(cur, dst, channels_, plane, divisor_, shift_); break;
    case DType::bfloat16: affine<bfloat16, bfloat16>(cur, dst, channels_, plane, divisor_, shift_); break;
    case DType::float32: affine<float, float>(cur, dst, channels_, plane, divisor_, shift_); break;
    case DType::float64: affine<double, double>(cur, dst, channels_, plane, divisor_, shift_); break;
    default: bad(std::string("the loader's transforms take no ") + name(in_dtype) + " data");
    }
    return chose;
}

}  // namespace plexus::data::detail
