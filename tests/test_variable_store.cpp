// nn::get_variable with a run-time shape (tf.compat.v1.get_variable(name, shape=[rows, cols],
// initializer=...)): the shape, the initializer applied once, the reuse rule the store documents
// (TF's reuse=AUTO_REUSE: the same name and shape return the same variable; another shape is
// TF's "Trying to share variable ..., but specified shape ... and found shape ..." ValueError)
// and the errors for a bad shape. Expected values come from the initializers' definitions
// (constant, zeros) and from TensorFlow's documented rules, not from running the code.
#include <catch2/catch.hpp>
#include <cmath>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/nn/variable_store.hpp>
#include <string>
#include <type_traits>

#include "error_of.hpp"

namespace hf = hookfuse;
using hookfuse_test::error_of;

TEST_CASE("get_variable with a run-time shape: the shape, rank and initializer") {
  hf::nn::VariableStore vars;
  auto& w = hf::nn::get_variable<"weights", float>(vars, 3, 4, hf::nn::constant{0.5});
  auto& b = hf::nn::get_variable<"biases", float, 1>(vars, 1, 4, hf::nn::zeros{});
  using W = std::remove_reference_t<decltype(w)>;
  using B = std::remove_reference_t<decltype(b)>;
  STATIC_REQUIRE(W::tf_rank == 2);
  STATIC_REQUIRE(B::tf_rank == 1);
  STATIC_REQUIRE(W::name == hf::fixed_string{"weights"});
  STATIC_REQUIRE(std::is_same_v<W::scalar, float>);
  CHECK(w.value.rows() == 3);
  CHECK(w.value.cols() == 4);
  CHECK(w.grad.rows() == 3);  // a training store: a gradient matrix of the same shape
  CHECK(w.grad.cols() == 4);
  CHECK(b.value.rows() == 1);
  CHECK(b.value.cols() == 4);
  for (hf::Index i = 0; i < 3; ++i)
    for (hf::Index j = 0; j < 4; ++j) CHECK(w.value(i, j) == 0.5f);
  CHECK(b.value.isZero());
  CHECK(vars.owns(&w));
  CHECK(vars.names() == std::vector<std::string>{"weights", "biases"});

  // truncated_normal(stddev 1): every value within two standard deviations of the mean, and
  // not all equal (a 784 x 256 kernel as in the MLP; its sample mean and spread near 0 and
  // 0.88, the standard deviation of a unit normal truncated at +-2).
  auto& k = hf::nn::get_variable<"kernel", float>(vars, 784, 256,
                                                  hf::nn::truncated_normal{.stddev = 1.0});
  CHECK(k.value.maxCoeff() <= 2.0f);
  CHECK(k.value.minCoeff() >= -2.0f);
  const double n = static_cast<double>(k.value.size());
  const double mean = k.value.cast<double>().sum() / n;
  const double sd = std::sqrt((k.value.cast<double>().array() - mean).square().sum() / n);
  CHECK(std::abs(mean) < 0.01);
  CHECK(sd == Approx(0.8796).margin(0.01));
}

TEST_CASE("get_variable with a run-time shape: the same name returns the same variable") {
  hf::nn::VariableStore vars;
  auto& a = hf::nn::get_variable<"weights", float>(vars, 2, 3, hf::nn::constant{1.0});
  a.value(0, 0) = 7.0f;
  auto& b = hf::nn::get_variable<"weights", float>(vars, 2, 3, hf::nn::constant{9.0});
  CHECK(&a == &b);
  CHECK(b.value(0, 0) == 7.0f);  // the initializer is not applied again
  CHECK(b.value(1, 2) == 1.0f);
  CHECK(vars.names().size() == 1);

  // Another shape under the same name: TF's ValueError, both shapes named.
  const std::string msg = error_of<hf::ValueError>(
      [&] { (void)hf::nn::get_variable<"weights", float>(vars, 2, 4); });
  CHECK_THAT(msg, Catch::Contains("Trying to share variable weights"));
  CHECK_THAT(msg, Catch::Contains("specified shape [2, 4]"));
  CHECK_THAT(msg, Catch::Contains("found shape [2, 3]"));

  // Another type (a fixed-shape variable, another scalar) under the same name.
  CHECK_THAT(error_of<hf::ValueError>(
                 [&] { (void)hf::nn::get_variable<"weights", float, 2, 3>(vars); }),
             Catch::Contains("'weights' already names an object of another type"));
  CHECK_THAT(error_of<hf::ValueError>(
                 [&] { (void)hf::nn::get_variable<"weights", double>(vars, 2, 3); }),
             Catch::Contains("'weights' already names an object of another type"));
}

TEST_CASE("get_variable with a run-time shape: a dimension < 1 is a ValueError naming it") {
  hf::nn::VariableStore vars;
  const std::string zero = error_of<hf::ValueError>(
      [&] { (void)hf::nn::get_variable<"weights", float>(vars, 0, 256); });
  CHECK_THAT(zero, Catch::Contains("'weights'"));
  CHECK_THAT(zero, Catch::Contains("[0, 256]"));
  CHECK_THAT(zero, Catch::Contains("every dimension must be >= 1"));
  CHECK_THAT(error_of<hf::ValueError>(
                 [&] { (void)hf::nn::get_variable<"weights", float>(vars, 784, -1); }),
             Catch::Contains("[784, -1]"));
  // Rank 1 is [cols], kept as one row.
  CHECK_THAT(error_of<hf::ValueError>(
                 [&] { (void)hf::nn::get_variable<"biases", float, 1>(vars, 2, 256); }),
             Catch::Contains("rows 1"));
  CHECK(vars.names().empty());  // nothing was created
}

TEST_CASE("get_variable with a run-time shape in a ForwardVariableStore: no gradient") {
  hf::nn::ForwardVariableStore vars;
  vars.seed = 3;
  auto& w = hf::nn::get_variable<"weights", float>(vars, 5, 2);
  using W = std::remove_reference_t<decltype(w)>;
  STATIC_REQUIRE(!W::has_grad);
  CHECK(w.value.rows() == 5);
  CHECK(w.value.cols() == 2);
  // glorot_uniform: |value| <= sqrt(6 / (5 + 2)).
  CHECK(w.value.cwiseAbs().maxCoeff() <= static_cast<float>(std::sqrt(6.0 / 7.0)));
  CHECK(!w.value.isZero());
}
