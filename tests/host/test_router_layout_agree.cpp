// The router refuses a bad neural-network call by the same rule, and in the
// same words, as a plugin checking that call (op_layout.h): one rule per
// family, not one in the host and another in the plugins.
#include <catch2/catch.hpp>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "../conformance/opened_plugin.hpp"
#include "plexus/op_layout.h"
#include "plexus/plexus.hpp"

using namespace plexus;

namespace {

px_tensor_desc desc(px_dtype dtype, std::initializer_list<int64_t> dims) {
    return pxconf::contiguous_desc(nullptr, dtype, dims);  // checked, never run: no buffer
}

// What the plugin-side rule says of the call.
std::string rule_says(int32_t op, std::vector<px_tensor_desc> in, std::vector<px_tensor_desc> out, const void* attrs) {
    const px_op_call call{sizeof call, op, 0, int32_t(in.size()), in.data(), int32_t(out.size()), out.data(), attrs};
    char why[PX_MESSAGE_MAX] = "";
    REQUIRE(px_op_layout_check(&call, why, sizeof why) != PX_OK);
    return why;
}

// What the frontend's call raised.
std::string router_says(const std::function<void()>& call) {
    try {
        call();
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("the call was accepted");
    return {};
}

}  // namespace

TEST_CASE("the router and px_op_layout_check refuse a bad nn call with the same reason", "[host][router][abi]") {
    const px_dtype f = PX_FLOAT32;
    SECTION("a bias of the wrong length") {
        const std::string why = rule_says(PX_OP_BIAS_ADD, {desc(f, {2, 3}), desc(f, {4})}, {desc(f, {2, 3})}, nullptr);
        CHECK(why == "the bias (input 1) has shape (4,); the call needs (3,)");
        CHECK(router_says([] { bias_add(zeros({2, 3}), zeros({4})); }) == "px_bias_add: bias_add: " + why);
    }
    SECTION("a weight whose channels are not the input's") {
        const px_conv2d_attrs one{sizeof(px_conv2d_attrs), 1, 1, 0, 0};
        const std::string why = rule_says(PX_OP_CONV2D, {desc(f, {1, 3, 5, 5}), desc(f, {4, 2, 3, 3})},
                                          {desc(f, {1, 4, 3, 3})}, &one);
        CHECK(why == "the input has 3 channels (shape (1, 3, 5, 5)) but the weight expects 2 (shape (4, 2, 3, 3))");
        CHECK(router_says([] { conv2d(zeros({1, 3, 5, 5}), zeros({4, 2, 3, 3})); }) == "px_conv2d: conv2d: " + why);
    }
    SECTION("pooling padded by more than half its window") {
        const px_pool2d_attrs wide{sizeof(px_pool2d_attrs), 2, 2, 2, 2, 2, 2};
        const std::string why = rule_says(PX_OP_MAX_POOL2D, {desc(f, {1, 3, 5, 5})}, {desc(f, {1, 3, 4, 4})}, &wide);
        CHECK(why == "padding 2x2 must be >= 0 and at most half the pool size 2x2");
        CHECK(router_says([] { max_pool2d(zeros({1, 3, 5, 5}), 2, 2, 2); }) == "px_pool2d: max_pool2d: " + why);
    }
    SECTION("a kernel with no cells, and an output gradient that fits no input") {
        const px_conv2d_attrs one{sizeof(px_conv2d_attrs), 1, 1, 0, 0};
        const Tensor dy = zeros({1, 4, 3, 3}), x = zeros({1, 2, 5, 5}), w = zeros({4, 2, 3, 3});
        px_tensor* out = nullptr;
        std::string why = rule_says(PX_OP_CONV2D_BACKWARD_WEIGHT, {desc(f, {1, 4, 3, 3}), desc(f, {1, 2, 5, 5})},
                                    {desc(f, {4, 2, 0, 3})}, &one);
        CHECK(why == "the kernel is empty along the height");
        CHECK(px_conv2d_backward_weight(dy.need(), x.need(), 0, 3, 1, 1, 0, 0, &out) == PX_ERROR_SHAPE);
        CHECK(std::string(px_last_error()) == "px_conv2d_backward_weight: conv2d_backward_weight: " + why);
        why = rule_says(PX_OP_CONV2D_BACKWARD_INPUT, {desc(f, {1, 4, 3, 3}), desc(f, {4, 2, 3, 3})},
                        {desc(f, {1, 2, 6, 6})}, &one);
        CHECK(why == "the output gradient (input 0) has shape (1, 4, 3, 3), which does not fit the weight and the input: "
                     "the call needs (1, 4, 4, 4)");
        CHECK(px_conv2d_backward_input(dy.need(), w.need(), 6, 6, 1, 1, 0, 0, &out) == PX_ERROR_SHAPE);
        CHECK(std::string(px_last_error()) == "px_conv2d_backward_input: conv2d_backward_input: " + why);
        CHECK(out == nullptr);
    }
    SECTION("labels that are not class indices") {
        const std::string why = rule_says(PX_OP_SOFTMAX_CROSS_ENTROPY, {desc(f, {2, 5}), desc(f, {2})}, {desc(f, {2})},
                                          nullptr);
        CHECK(why == "the labels (input 1) are float32; labels are int32 or int64 class indices");
        CHECK(router_says([] { softmax_cross_entropy(zeros({2, 5}), zeros({2})); }) ==
              "px_softmax_cross_entropy: softmax_cross_entropy: " + why);
    }
    SECTION("labels that are not one per row") {
        const std::string why = rule_says(PX_OP_SOFTMAX_CROSS_ENTROPY, {desc(f, {2, 5}), desc(PX_INT64, {3})},
                                          {desc(f, {2})}, nullptr);
        CHECK(why == "the labels (input 1) have shape (3,); one label per row of the logits (2, 5) is needed");
        CHECK(router_says([] { softmax_cross_entropy(zeros({2, 5}), zeros({3}, cpu(), DType::int64)); }) ==
              "px_softmax_cross_entropy: softmax_cross_entropy: " + why);
    }
}
