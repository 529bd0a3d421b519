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
    // Float indices are refused where every take is checked (the router), as PyTorch refuses them.
    // Not autocast: a lookup keeps the table's dtype, as in PyTorch's autocast (nn::Autocast).
    return take(weight_->data(x.device()), x);
}

}  // namespace plexus::nn
