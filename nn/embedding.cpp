// Embedding: rows of a weight table picked by integer indices.
#include "plexus/nn.hpp"

namespace plexus::nn {

Embedding::Embedding(int64_t input_dim, int64_t output_dim) : input_dim_(input_dim), output_dim_(output_dim) {
    if (input_dim < 1 || output_dim < 1)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Embedding: input_dim and output_dim must be >= 1, got " +
                                                                  std::to_string(input_dim) + " and " +
                                                                  std::to_string(output_dim));
    weight_ = std::make_shared<Parameter>("weight", Shape{input_dim, output_dim});
}

std::vector<Parameter*> Embedding::own_params() { return {weight_.get()}; }

std::string Embedding::describe() const {
    return "Embedding(" + std::to_string(input_dim_) + " -> " + std::to_string(output_dim_) + ")";
}

Tensor Embedding::forward(const Tensor& x) {
    // Float indices that are whole numbers are rows, as MXNet's Embedding reads d2l's float32 token ids
    // (checked here: a wait; NaN or 1.5 is refused, not truncated); integer ones go to take as they are.
    // Not autocast: a lookup keeps the table's dtype, as in PyTorch's autocast (nn::Autocast).
    const Tensor rows = is_floating(x.dtype()) ? class_indices(x, DType::int64, "Embedding", "an index is not a row number") : x;
    return take(weight_->data(x.device()), rows);
}

}  // namespace plexus::nn
