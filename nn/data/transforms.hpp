// The loader's transforms, checked once against the dataset's samples and
// then run on each sample as its batch is prepared (on the prefetch thread).
#pragma once

#include <memory>
#include <vector>

#include "plexus/data.hpp"

namespace plexus::data::detail {

struct Pipeline {
    // Checks `transforms` for samples of `dtype` and shape `sample` (one row);
    // InvalidArgumentError naming the transform and what is wrong.
    static std::shared_ptr<const Pipeline> make(const std::vector<Transform>& transforms, DType dtype,
                                                const Shape& sample);
    // Writes the transformed sample `src` (in the dataset's dtype and sample
    // shape) to `dst` (out_dtype, out_sample). `key` seeds its random
    // choices, which it returns.
    Augmentation apply(const uint8_t* src, uint8_t* dst, uint64_t key) const;

    DType in_dtype = DType::float32, out_dtype = DType::float32;
    Shape in_sample, out_sample;
    bool random = false;  // a crop or a flip draws per sample

private:
    struct Geometry {
        bool crop = false;  // else a flip
        int64_t height = 0, width = 0, padding = 0;
        double p = 0;
    };
    std::vector<Geometry> geometry_;  // in order, on raw values
    // value = raw / divisor - shift, per channel (ToTensor and Normalize folded).
    bool affine_ = false;
    std::vector<double> divisor_, shift_;
    int64_t channels_ = 1;
};

// A key for the random choices of the sample at `position` of `epoch`.
uint64_t sample_key(uint64_t seed, uint64_t epoch, int64_t position);

}  // namespace plexus::data::detail
