// Accuracy and TopKAccuracy against values worked out by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "../support.hpp"
#include "plexus/metric.hpp"

using namespace plexus;
using pxtest::message_of;

TEST_CASE("Accuracy counts the rows whose highest score is the label's", "[metric]") {
    metric::Accuracy acc;
    CHECK(std::isnan(acc.get().second));  // no samples yet, as Gluon's
    CHECK(acc.get().first == "accuracy");
    const Tensor preds = array({0.1f, 0.7f, 0.2f,   // 1
                                0.5f, 0.3f, 0.2f,   // 0
                                0.3f, 0.3f, 0.4f,   // 2
                                0.4f, 0.4f, 0.2f},  // 0 and 1 tie: argmax takes the first, 0
                               {4, 3});
    acc.update(array(std::vector<int32_t>{1, 2, 2, 1}), preds);
    CHECK(acc.get().second == 0.5);
    CHECK(acc.num_samples() == 4);
    // Labels of any dtype holding class numbers, and preds on another device, summed together.
    acc.update(array(std::vector<float>{0, 0}, {2}, cpu(1)), array({0.9f, 0.1f, 0.2f, 0.8f}, {2, 2}, cpu(1)));
    CHECK(acc.get().second == Approx(3.0 / 6));
    // Class predictions already made: compared as they are.
    acc.update(std::vector<Tensor>{array(std::vector<int64_t>{4, 5})}, std::vector<Tensor>{array({4.0f, 1.0f})});
    CHECK(acc.get().second == Approx(4.0 / 8));
    acc.reset();
    CHECK(std::isnan(acc.get().second));
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { acc.update(array(std::vector<int32_t>{1, 2}), preds); }),
                        "Accuracy: wants labels (N) and preds (N, C), got (2,) and (4, 3)");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] {
        acc.update(std::vector<Tensor>{array({1.0f})}, std::vector<Tensor>{});
    }), "accuracy: 1 labels for 0 preds");
}

TEST_CASE("TopKAccuracy counts a label among the k highest, ties in its favour", "[metric]") {
    const Tensor preds = array({0.1f, 0.5f, 0.3f, 0.1f,    // label 2: one score above it -> in the top 2
                                0.4f, 0.3f, 0.2f, 0.1f,    // label 3: three above -> not
                                0.4f, 0.2f, 0.2f, 0.4f,    // label 0: none above, one equal -> in, even the top 1
                                0.1f, 0.2f, 0.3f, 0.4f},   // label 1: two above -> not
                               {4, 4});
    const Tensor labels = array(std::vector<int64_t>{2, 3, 0, 1});
    metric::TopKAccuracy top2(2), top3(3), top1(1), top4(4);
    top2.update(labels, preds);
    top3.update(labels, preds);
    top1.update(labels, preds);
    top4.update(labels, preds);
    CHECK(top2.get().first == "top_k_accuracy_2");
    CHECK(top2.get().second == 0.5);
    CHECK(top3.get().second == 0.75);
    CHECK(top1.get().second == 0.25);  // row 2's tie at the top counts for its label
    CHECK(top4.get().second == 1.0);
    // -inf and NaN elsewhere in a row do not reach the label's score; a label outside [0, C) is never a hit.
    metric::TopKAccuracy k(1);
    const float inf = INFINITY;
    k.update(array(std::vector<int32_t>{0, 1, 7, -1}),
             array({0.5f, -inf, -inf, 0.1f, 9.0f, 1.0f, 2.0f, 3.0f}, {4, 2}));
    CHECK(k.get().second == 0.5);
    // NaN ranks above every number (as torch.topk, and Accuracy's argmax): scores gone NaN are no hits.
    metric::TopKAccuracy top1_nan(1), top2_nan(2);
    const float nan = NAN;
    const Tensor nan_preds = array({1.0f, nan, 0.0f, nan, nan, nan, nan, 0.0f, 3.0f}, {3, 3});
    const Tensor nan_labels = array(std::vector<int64_t>{0, 0, 2});
    top1_nan.update(nan_labels, nan_preds);
    top2_nan.update(nan_labels, nan_preds);
    metric::Accuracy acc_nan;
    acc_nan.update(nan_labels, nan_preds);
    // Row 1 is all NaN: no hit, though its label 0 is argmax's first NaN (a
    // model gone NaN had scored 1.0 at any k, every label tying).
    CHECK(top1_nan.get().second == 0.0);
    CHECK(acc_nan.get().second == 0.0);
    CHECK(top2_nan.get().second == Approx(2.0 / 3));  // rows 0 and 2: one NaN above each label
    metric::TopKAccuracy all(5);
    all.update(array(std::vector<int32_t>{9}), array({1.0f, 2.0f}, {1, 2}));
    CHECK(all.get().second == 0.0);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { metric::TopKAccuracy(0); }), "TopKAccuracy: k must be >= 1, got 0");
    PX_REQUIRE_MENTIONS(message_of<DTypeError>([&] {
        top2.update(labels, array(std::vector<int32_t>{1, 2, 3, 4}, {4, 1}));
    }), "TopKAccuracy: the scores are int32, not floats");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { top2.update(labels, array({1.0f, 2.0f}, {1, 2})); }),
                        "TopKAccuracy: wants labels (N) and preds (N, C)");
}
