// The data plexus-train reads from --data: Fashion-MNIST's IDX files in a
// folder, or a NumPy .npz with x_train, y_train, x_test and y_test.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "plexus/data.hpp"

namespace plexus::train {

class TrainData {
public:
    // Reads --data: an .npz by its name, else Fashion-MNIST's folder.
    explicit TrainData(const std::string& data);
    // A loader of the training or test set (which must outlive it): images
    // (n, C, H, W) float32 as (pixel / 255 - 0.13) / 0.31 for uint8 images, the
    // values as they are for float ones, labels int32.
    std::unique_ptr<data::DataLoader> loader(bool train, int64_t batch_size, bool shuffle, Device device,
                                             uint64_t seed = 0) const;
    int64_t count(bool train) const;
    Shape image() const;  // (C, H, W)
    // What the sets hold, as "100 training and 20 test images of (1, 28, 28),
    // checksum 89ab...": a resumed run must train on the data its checkpoint
    // did, found at whatever path.
    std::string contents() const;
    std::string what;     // "Fashion-MNIST from FOLDER" or "FILE.npz"

private:
    std::optional<data::ImageDataset> fm_train_, fm_test_;
    std::optional<data::ArrayDataset> train_, test_;
};

}  // namespace plexus::train
