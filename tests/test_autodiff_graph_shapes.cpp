// tests/test_autodiff_graph_shapes.cpp: bind-time errors of a graph: dynamic shapes that do
// not fit an op, a negative capacity or one whose buffers cannot be indexed (split from
// test_autodiff_graph.cpp to keep each file's compile time under a minute).
#include <catch2/catch.hpp>

#include "error_of.hpp"
#include <cstdint>
#include <limits>
#include <string>

#include "hookfuse/autodiff.hpp"

namespace hf = hookfuse;
using Catch::Matchers::Contains;
using hf::Dynamic;
using hf::Index;
using hookfuse_test::error_of;

TEST_CASE("graph: dynamic shapes that do not fit throw ShapeError at bind", "[autodiff][graph]") {
  hf::Placeholder<"x", double, 3> x;
  SECTION("matmul: [8, 3] . [5, 4]") {
    hf::Variable<"w", double, Dynamic, Dynamic> w(5, 4);
    const std::string msg =
        error_of<hf::ShapeError>([&] { (void)hf::bind(8, hf::reduce_sum(hf::matmul(x, w))); });
    CHECK_THAT(msg, Contains("[8, 3]") && Contains("[5, 4]"));
  }
  SECTION("matmul with a placeholder of run-time width") {
    hf::Placeholder<"x", double, Dynamic> xd{6};
    hf::Variable<"w", double, Dynamic, 4> w(5, 4);
    const std::string msg =
        error_of<hf::ShapeError>([&] { (void)hf::bind(2, hf::reduce_sum(hf::matmul(xd, w))); });
    CHECK_THAT(msg, Contains("[2, 6]") && Contains("[5, 4]"));
  }
  SECTION("bias of the wrong width") {
    hf::Variable<"w", double, Dynamic, Dynamic> w(3, 4);
    hf::Variable<"b", double, 1, Dynamic> b(1, 5);
    const std::string msg =
        error_of<hf::ShapeError>([&] { (void)hf::bind(8, hf::reduce_sum(hf::matmul(x, w) + b)); });
    CHECK_THAT(msg, Contains("[8, 4]") && Contains("[1, 5]"));
  }
  SECTION("a [1, c] operand broadcasts only when its one row is known at compile time") {
    hf::Variable<"w", double, Dynamic, Dynamic> w(3, 4);
    hf::Variable<"b", double, Dynamic, Dynamic> b(1, 4);
    const std::string msg =
        error_of<hf::ShapeError>([&] { (void)hf::bind(8, hf::reduce_sum(hf::matmul(x, w) + b)); });
    CHECK_THAT(msg, Contains("[8, 4]") && Contains("[1, 4]"));
  }
  SECTION("elementwise product and mean squared error") {
    hf::Variable<"w", double, Dynamic, Dynamic> w(3, 4);
    hf::Variable<"v", double, Dynamic, Dynamic> v(3, 4);
    hf::Placeholder<"t", double, Dynamic> t{5};
    CHECK_THROWS_AS(hf::bind(8, hf::reduce_sum(hf::multiply(hf::matmul(x, w), v))), hf::ShapeError);
    CHECK_THROWS_AS(hf::bind(8, hf::mean_squared_error(t, hf::matmul(x, w))), hf::ShapeError);
  }
  SECTION("labels of more than one column") {
    hf::Placeholder<"y", std::int32_t, Dynamic> y{2};
    hf::Variable<"w", double, Dynamic, Dynamic> w(3, 4);
    const std::string msg = error_of<hf::ShapeError>(
        [&] { (void)hf::bind(8, hf::sparse_softmax_cross_entropy(y, hf::matmul(x, w))); });
    CHECK_THAT(msg, Contains("[8, 2]") && Contains("[8, 4]"));
  }
  SECTION("shapes that fit do not throw") {
    hf::Variable<"w", double, Dynamic, Dynamic> w(3, 4);
    hf::Variable<"b", double, 1, Dynamic> b(1, 4);
    CHECK_NOTHROW(hf::bind(8, hf::reduce_sum(hf::matmul(x, w) + b)));
  }
}

TEST_CASE("graph: bind refuses a negative capacity, or one whose buffers cannot be indexed",
          "[autodiff][graph]") {
  hf::Placeholder<"x", float, 784> x;
  hf::Placeholder<"y", std::int32_t, 1> y;
  hf::Variable<"w", float, Dynamic, Dynamic> w(784, 10);
  auto loss = [&] {
    return hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, hf::matmul(x, w)));
  };
  SECTION("capacity -1") {
    const std::string msg = error_of<hf::ValueError>([&] { (void)hf::bind(-1, loss()); });
    CHECK_THAT(msg, Contains("capacity") && Contains("got -1"));
  }
  SECTION("capacity 2^60: [2^60, 1] int32 labels fit an index, [2^60, 784] floats do not") {
    const Index huge = Index{1} << 60;
    const std::string msg = error_of<hf::ValueError>([&] { (void)hf::bind(huge, loss()); });
    CHECK_THAT(msg, Contains("capacity 1152921504606846976") && Contains("'x'") &&
                        Contains("[1152921504606846976, 784]"));
  }
  SECTION("capacity 0 (an empty input) binds, and a 0-row batch gives TensorFlow's 0 loss") {
    auto g = hf::bind(0, loss());
    CHECK(g.capacity() == 0);
    const float xs[1] = {0.0f};
    const std::int32_t ys[1] = {0};
    g.feed<"x">(xs, 0, 784);
    g.feed<"y">(ys, 0);
    CHECK(g.forward() == 0.0f);
    g.backward();
    CHECK(w.grad.isZero(0.0f));
  }
}
