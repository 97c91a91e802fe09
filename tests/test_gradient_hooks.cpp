// tests/test_gradient_hooks.cpp: the gradient event (before_apply_gradients), the update event
// (after_apply_gradients) and the clipping hooks, GradientClipByNormHook
// (tf.clip_by_global_norm) and GradientClipByValueHook (tf.clip_by_value).
//
// Every expected gradient and variable value is computed by hand here from the model
//   pred = x W + b, loss = (pred - y)^2 (tf.compat.v1.losses.mean_squared_error of one element),
//   d loss / d W = 2 (pred - y) x, d loss / d b = 2 (pred - y),
// with W, b of shape [1, 1] and one example per run, and from TensorFlow's documented formulas.
// The last test counts heap allocations (tests/alloc_counter.hpp, which must come first).

// clang-format off: alloc_counter.hpp must precede every Eigen header.
#define HOOKFUSE_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"
// clang-format on

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <hookfuse/hookfuse.hpp>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hf = hookfuse;

namespace {

/// pred = x W + b, loss = (pred - y)^2, W(0, 0) = 3, b = 1.
struct Model {
  hf::Placeholder<"x", double, 1> x;
  hf::Placeholder<"y", double, 1> y;
  hf::Variable<"W", double, 1, 1> W;
  hf::Variable<"b", double, 1, 1, 1> b;
  hf::GlobalStep gs;
  Model() {
    W.value(0, 0) = 3.0;
    b.value(0, 0) = 1.0;
  }
  auto loss() { return hf::named<"loss">(hf::mean_squared_error(y, hf::matmul(x, W) + b)); }
};

/// A read-only observer: copies the gradients it is shown (by variable name) in the last run.
struct GradientObserver {
  double w = 0.0, b = 0.0;
  int calls = 0;
  void before_apply_gradients(const auto& gradients) {
    ++calls;
    gradients.for_each([this](const auto& g, std::string_view name) {
      if (name == "W")
        w = g(0, 0);
      else if (name == "b")
        b = g(0, 0);
    });
  }
};

/// Records GradientContext::batch_rows() of every run.
struct RowsObserver {
  std::vector<std::int64_t> rows;
  void before_apply_gradients(const auto& gradients) { rows.push_back(gradients.batch_rows()); }
};

/// Fetches "gradients/W" like any hook; what after_run receives.
struct GradientFetch {
  double w = 0.0;
  hf::SessionRunArgs<"gradients/W"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"gradients/W">& v) {
    w = v.get<"gradients/W">().at(0, 0);
  }
};

/// One step on (x, y) with `optimizer` and `hooks`; the model's variables are read afterwards.
template <class Opt, class Hooks>
void one_step(Model& m, const Opt& optimizer, Hooks hooks, double x, double y) {
  hf::MonitoredTrainingSession s(optimizer.minimize(m.loss(), m.gs), hf::caller_feeds(1),
                                 std::move(hooks));
  s.run(hf::feed<"x">(&x, 1, 1), hf::feed<"y">(&y, 1, 1));
}

template <class Opt, class... Hooks>
using SessionOf =
    hf::MonitoredTrainingSession<decltype(std::declval<const Opt&>().minimize(
                                     std::declval<Model&>().loss(),
                                     std::declval<hf::GlobalStep&>())),
                                 hf::CallerFeeds, decltype(hf::hooks(std::declval<Hooks>()...))>;

}  // namespace

TEST_CASE("GradientClipByNormHook equals tf.clip_by_global_norm on a hand-computed case",
          "[gradient_hooks]") {
  // x = 2, y = 1: pred = 3 * 2 + 1 = 7, residual 6, dW = 2 * 6 * 2 = 24, db = 2 * 6 = 12.
  // global_norm = sqrt(24^2 + 12^2) = sqrt(720) = 12 sqrt(5) = 26.8328...; clip_norm 5 < 26.8,
  // so each gradient is scaled by 5 / sqrt(720): dW = 120 / sqrt(720) = 2 sqrt(5) = 4.47214,
  // db = 60 / sqrt(720) = sqrt(5) = 2.23607. SGD at 0.1: W = 3 - 0.447214 = 2.552786,
  // b = 1 - 0.223607 = 0.776393.
  const double norm = std::sqrt(720.0);
  const double dw = 24.0 * 5.0 / norm, db = 12.0 * 5.0 / norm;
  REQUIRE(dw == Approx(2.0 * std::sqrt(5.0)));
  Model m;
  hf::GradientClipByNormHook clip(5.0);
  GradientObserver seen;
  GradientFetch fetched;
  one_step(m, hf::GradientDescentOptimizer(0.1),
           hf::hooks(std::ref(clip), std::ref(seen), std::ref(fetched)), 2.0, 1.0);
  CHECK(clip.global_norm() == Approx(norm).epsilon(1e-12));
  CHECK(seen.calls == 1);
  CHECK(seen.w == Approx(dw).epsilon(1e-12));
  CHECK(seen.b == Approx(db).epsilon(1e-12));
  CHECK(fetched.w == Approx(dw).epsilon(1e-12));  // a "gradients/W" fetch sees the clipped one
  CHECK(m.W.value(0, 0) == Approx(3.0 - 0.1 * dw).epsilon(1e-12));
  CHECK(m.W.value(0, 0) == Approx(2.552786).epsilon(1e-6));
  CHECK(m.b.value(0, 0) == Approx(1.0 - 0.1 * db).epsilon(1e-12));
  CHECK(m.b.value(0, 0) == Approx(0.776393).epsilon(1e-6));
}

TEST_CASE("GradientClipByNormHook below the threshold leaves the gradients as they are",
          "[gradient_hooks]") {
  // Same case, clip_norm 100 > sqrt(720): dW = 24, db = 12 exactly; W = 3 - 2.4, b = 1 - 1.2.
  Model m;
  hf::GradientClipByNormHook clip(100.0);
  GradientObserver seen;
  one_step(m, hf::GradientDescentOptimizer(0.1), hf::hooks(std::ref(clip), std::ref(seen)), 2.0,
           1.0);
  CHECK(clip.global_norm() == Approx(std::sqrt(720.0)).epsilon(1e-12));
  CHECK(seen.w == 24.0);
  CHECK(seen.b == 12.0);
  CHECK(m.W.value(0, 0) == Approx(0.6).epsilon(1e-12));
  CHECK(m.b.value(0, 0) == Approx(-0.2).epsilon(1e-12));
}

TEST_CASE("GradientClipByNormHook makes every gradient NaN when the norm is not finite",
          "[gradient_hooks]") {
  // y = +inf: residual -inf, dW = db = -inf, global_norm = inf; TensorFlow's clip_by_global_norm
  // then returns NaN for every tensor.
  Model m;
  hf::GradientClipByNormHook clip(5.0);
  GradientObserver seen;
  one_step(m, hf::GradientDescentOptimizer(0.1), hf::hooks(std::ref(clip), std::ref(seen)), 2.0,
           std::numeric_limits<double>::infinity());
  CHECK(std::isinf(clip.global_norm()));
  CHECK(std::isnan(seen.w));
  CHECK(std::isnan(seen.b));
  CHECK(std::isnan(m.W.value(0, 0)));
}

TEST_CASE("GradientClipByValueHook clips each gradient element-wise as tf.clip_by_value",
          "[gradient_hooks]") {
  // x = 2, y = 20: pred = 7, residual -13, dW = 2 * -13 * 2 = -52, db = -26. Clipped to
  // [-30, 30]: dW = -30 (at the minimum), db = -26 (inside). SGD at 0.1: W = 3 + 3 = 6,
  // b = 1 + 2.6 = 3.6.
  Model m;
  GradientObserver seen;
  one_step(m, hf::GradientDescentOptimizer(0.1),
           hf::hooks(hf::GradientClipByValueHook(-30.0, 30.0), std::ref(seen)), 2.0, 20.0);
  CHECK(seen.w == -30.0);
  CHECK(seen.b == -26.0);
  CHECK(m.W.value(0, 0) == Approx(6.0).epsilon(1e-12));
  CHECK(m.b.value(0, 0) == Approx(3.6).epsilon(1e-12));

  // x = 2, y = 1: dW = 24, db = 12, clipped to [-1, 5]: both 5 (at the maximum).
  Model m2;
  GradientObserver seen2;
  one_step(m2, hf::GradientDescentOptimizer(0.1),
           hf::hooks(hf::GradientClipByValueHook(-1.0, 5.0), std::ref(seen2)), 2.0, 1.0);
  CHECK(seen2.w == 5.0);
  CHECK(seen2.b == 5.0);
  CHECK(m2.W.value(0, 0) == Approx(2.5).epsilon(1e-12));
  CHECK(m2.b.value(0, 0) == Approx(0.5).epsilon(1e-12));
}

TEST_CASE("Gradient hooks are called in hook order", "[gradient_hooks]") {
  // The observer placed before the clipper sees the raw gradients (24, 12); placed after, the
  // clipped ones (5, 5). The update uses the final (clipped) ones either way.
  Model m;
  GradientObserver before, after;
  one_step(m, hf::GradientDescentOptimizer(0.1),
           hf::hooks(std::ref(before), hf::GradientClipByValueHook(-5.0, 5.0), std::ref(after)),
           2.0, 1.0);
  CHECK(before.w == 24.0);
  CHECK(before.b == 12.0);
  CHECK(after.w == 5.0);
  CHECK(after.b == 5.0);
  CHECK(m.W.value(0, 0) == Approx(2.5).epsilon(1e-12));
}

TEST_CASE("GradientContext batch_rows is the rows fed this run, 0 for an empty batch",
          "[gradient_hooks]") {
  Model m;
  hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(4), hf::hooks(RowsObserver{}));
  const std::vector<double> x = {1.0, 2.0, 3.0, 4.0}, y = {0.0, 0.0, 0.0, 0.0};
  for (const std::int64_t n : {4, 1, 0, 3})
    s.run(hf::feed<"x">(x.data(), n, 1), hf::feed<"y">(y.data(), n, 1));
  CHECK(s.hook<RowsObserver>().rows == std::vector<std::int64_t>{4, 1, 0, 3});
}

TEST_CASE("A gradient hook stores every gradient, without one the update stays fused",
          "[gradient_hooks]") {
  using Sgd = hf::GradientDescentOptimizer;
  using Momentum = hf::MomentumOptimizer;
  STATIC_REQUIRE(SessionOf<Sgd>::update_fused<"W">);
  STATIC_REQUIRE(SessionOf<Sgd>::update_fused<"b">);
  STATIC_REQUIRE(SessionOf<Sgd, GradientObserver>::update_fused<"W"> == false);
  STATIC_REQUIRE(SessionOf<Sgd, hf::GradientClipByNormHook>::update_fused<"W"> == false);
  STATIC_REQUIRE(SessionOf<Sgd, hf::GradientClipByNormHook>::update_fused<"b"> == false);
  STATIC_REQUIRE(SessionOf<Momentum>::update_fused<"W">);
  STATIC_REQUIRE(SessionOf<Momentum, hf::GradientClipByValueHook>::update_fused<"W"> == false);
  STATIC_REQUIRE(SessionOf<Momentum, hf::GradientClipByValueHook>::update_fused<"b"> == false);
}

namespace {
/// Halves the gradient of W only; declares so, so b's update stays fused.
struct HalveW {
  using gradient_variables = hf::GradientVariables<"W">;
  int pairs = 0;
  void before_apply_gradients(auto& gradients) {
    gradients.for_each([this](auto& g, std::string_view name) {
      ++pairs;
      CHECK(name == "W");
      g *= 0.5;
    });
  }
};
}  // namespace

TEST_CASE("A gradient hook that declares gradient_variables pins only those", "[gradient_hooks]") {
  STATIC_REQUIRE(SessionOf<hf::GradientDescentOptimizer, HalveW>::update_fused<"W"> == false);
  STATIC_REQUIRE(SessionOf<hf::GradientDescentOptimizer, HalveW>::update_fused<"b">);
  // x = 2, y = 1: dW = 24 halved to 12, W = 3 - 1.2 = 1.8; db = 12 (fused), b = 1 - 1.2 = -0.2.
  Model m;
  HalveW halve;
  one_step(m, hf::GradientDescentOptimizer(0.1), hf::hooks(std::ref(halve)), 2.0, 1.0);
  CHECK(halve.pairs == 1);
  CHECK(m.W.value(0, 0) == Approx(1.8).epsilon(1e-12));
  CHECK(m.b.value(0, 0) == Approx(-0.2).epsilon(1e-12));
}

TEST_CASE("A chief-only gradient hook (ConditionalHook) gets the event only when present",
          "[gradient_hooks]") {
  using Cond = hf::ConditionalHook<std::reference_wrapper<GradientObserver>>;
  STATIC_REQUIRE(hf::GradientHook<Cond>);
  STATIC_REQUIRE(SessionOf<hf::GradientDescentOptimizer, Cond>::update_fused<"W"> == false);
  for (bool present : {true, false}) {
    INFO("present " << present);
    Model m;
    GradientObserver seen;
    one_step(m, hf::GradientDescentOptimizer(0.1), hf::hooks(Cond(std::ref(seen), present)), 2.0,
             1.0);
    CHECK(seen.calls == (present ? 1 : 0));
    CHECK(m.W.value(0, 0) == Approx(0.6).epsilon(1e-12));  // 3 - 0.1 * 24 either way
  }
}

TEST_CASE("Gradient clipping works with Momentum and Adam", "[gradient_hooks]") {
  // Momentum (TF ApplyMomentum): accum = 0.9 * 0 + g = g, var -= lr * accum: the first step is
  // SGD's, with the clipped gradients (dW = 2 sqrt(5), db = sqrt(5) as in the first test).
  {
    Model m;
    one_step(m, hf::MomentumOptimizer(0.1, 0.9), hf::hooks(hf::GradientClipByNormHook(5.0)), 2.0,
             1.0);
    CHECK(m.W.value(0, 0) == Approx(3.0 - 0.2 * std::sqrt(5.0)).epsilon(1e-12));
    CHECK(m.b.value(0, 0) == Approx(1.0 - 0.1 * std::sqrt(5.0)).epsilon(1e-12));
  }
  // Adam (TF ApplyAdam), first step: m = (1 - b1) g, v = (1 - b2) g^2,
  // lr_t = lr sqrt(1 - b2) / (1 - b1), var -= lr_t m / (sqrt(v) + eps). With the gradients
  // clipped to 5 by value: m = 0.5, v = 0.025, lr_t = 0.001 * sqrt(0.001) / 0.1,
  // step = lr_t * 0.5 / (sqrt(0.025) + 1e-8).
  {
    Model m;
    GradientObserver seen;
    one_step(m, hf::AdamOptimizer(0.001),
             hf::hooks(hf::GradientClipByValueHook(-5.0, 5.0), std::ref(seen)), 2.0, 1.0);
    CHECK(seen.w == 5.0);
    const double lr_t = 0.001 * std::sqrt(1.0 - 0.999) / (1.0 - 0.9);
    const double step = lr_t * 0.5 / (std::sqrt(0.025) + 1e-8);
    CHECK(m.W.value(0, 0) == Approx(3.0 - step).epsilon(1e-12));
    CHECK(m.b.value(0, 0) == Approx(1.0 - step).epsilon(1e-12));
  }
}

TEST_CASE("Gradient clipping hooks check their arguments", "[gradient_hooks]") {
#ifdef HOOKFUSE_NO_EXCEPTIONS
  SKIP("argument errors abort in a HOOKFUSE_NO_EXCEPTIONS build");
#else
  using Catch::Matchers::Contains;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {0.0, -1.0, nan, inf}) {
    INFO("clip_norm " << bad);
    CHECK_THROWS_MATCHES(
        hf::GradientClipByNormHook(bad), std::invalid_argument,
        Catch::Matchers::Message("GradientClipByNormHook: clip_norm must be finite and > 0"));
  }
  CHECK_THROWS_MATCHES(hf::GradientClipByValueHook(1.0, -1.0), std::invalid_argument,
                       Catch::Matchers::Message(
                           "GradientClipByValueHook: clip_value_min must be <= clip_value_max"));
  CHECK_THROWS_WITH(hf::GradientClipByValueHook(nan, 1.0), Contains("must not be NaN"));
  CHECK_THROWS_WITH(hf::GradientClipByValueHook(-1.0, nan), Contains("must not be NaN"));
  CHECK_NOTHROW(hf::GradientClipByValueHook(-inf, 2.0));
  CHECK_NOTHROW(hf::GradientClipByValueHook(2.0, 2.0));
#endif
}

namespace {
constexpr int kIn = 64, kHidden = 32, kOut = 10;
constexpr hf::Index kBatch = 16;

/// A fixed random batch fed every run.
struct FixedBatch {
  std::vector<float> x;
  std::vector<std::int32_t> y;
  FixedBatch() : x(static_cast<std::size_t>(kBatch * kIn)), y(static_cast<std::size_t>(kBatch)) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& v : x) v = u(rng);
    for (auto& v : y) v = static_cast<std::int32_t>(rng() % kOut);
  }
  bool next() { return true; }
  hf::Index batch_size() const { return kBatch; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(x.data(), kBatch, kIn);
    g.template feed<"labels">(y.data(), kBatch);
  }
};

/// Sums the gradients it sees (read-only), without allocating.
struct SumObserver {
  double sum = 0.0;
  void before_apply_gradients(const auto& gradients) {
    gradients.for_each(
        [this](const auto& g, std::string_view) { sum += static_cast<double>(g.sum()); });
  }
};
/// Sums the updated values and slots it sees (read-only), without allocating.
struct UpdateSum {
  double sum = 0.0;
  void after_apply_gradients(const auto& updated) {
    updated.for_each(
        [this](const auto& t, std::string_view) { sum += static_cast<double>(t.sum()); });
  }
};
}  // namespace

TEST_CASE("A step with the clipping hooks allocates nothing", "[gradient_hooks][alloc]") {
  hf::Placeholder<"x", float, kIn> x;
  hf::Placeholder<"labels", std::int32_t, 1> y;
  // Runtime sizes: dynamic gradients, so an Eigen temporary would be a heap allocation.
  hf::nn::Dense<"dense", float> hidden(kIn, kHidden, hf::nn::glorot_uniform{1});
  hf::nn::Dense<"logits", float> out(kHidden, kOut, hf::nn::glorot_uniform{2});
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(y, out(hf::relu(hidden(x)))));
  hf::GlobalStep gs;
  hf::GradientClipByNormHook clip(1e-3);  // far below the norm: clips every run
  SumObserver seen;
  UpdateSum updated;
  hf::MonitoredTrainingSession session(
      hf::MomentumOptimizer(0.01, 0.9).minimize(loss, gs), FixedBatch{},
      hf::hooks(hf::GradientClipByValueHook(-0.05, 0.05), std::ref(clip), std::ref(seen),
                std::ref(updated)));
  session.run();  // warm-up
  std::size_t news = 0, eigen_mallocs = 0;
  {
    hookfuse_test::NoAllocScope scope;  // no Catch2 assertions inside: they allocate
    for (int i = 0; i < 20; ++i) session.run();
    news = scope.news();
    eigen_mallocs = scope.eigen_mallocs();
  }
  CHECK(news == 0);
  CHECK(eigen_mallocs == 0);
  CHECK(clip.global_norm() > 1e-3);  // the clipping branch ran
  CHECK(seen.sum != 0.0);
  CHECK(updated.sum != 0.0);
  CHECK(session.global_step() == 21);
}

namespace {
using Events = std::vector<std::string>;

/// Copies, in after_apply_gradients, every tensor it is shown (name, element (0, 0)), the global
/// step and the rows; logs its event.
struct UpdateObserver {
  Events* log = nullptr;
  std::vector<std::pair<std::string, double>> seen;
  std::int64_t step = -1, rows = -1;
  int calls = 0;
  void after_apply_gradients(const auto& updated) {
    ++calls;
    if (log) log->push_back("after_apply_gradients");
    step = updated.global_step();
    rows = updated.batch_rows();
    seen.clear();
    updated.for_each([this](const auto& t, std::string_view name) {
      seen.emplace_back(std::string(name), static_cast<double>(t(0, 0)));
    });
  }
};
/// Logs after_run with the global step it sees.
struct RunLogger {
  Events* log;
  void after_run(hf::SessionRunContext& ctx, const hf::SessionRunValues<>&) {
    log->push_back("after_run " + std::to_string(ctx.global_step()));
  }
};
/// Sets b's value to 0 after every update.
struct ZeroB {
  void after_apply_gradients(auto& updated) {
    updated.for_each([](auto& t, std::string_view name) {
      if (name == "b") t.setZero();
    });
  }
};
/// True when `got` holds the names of `want` in order with values equal to 1e-12.
bool same_tensors(const std::vector<std::pair<std::string, double>>& got,
                  const std::vector<std::pair<std::string, double>>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    UNSCOPED_INFO(got[i].first << " = " << got[i].second << ", want " << want[i].first << " = "
                               << want[i].second);
    if (got[i].first != want[i].first || std::abs(got[i].second - want[i].second) > 1e-12)
      return false;
  }
  return true;
}
}  // namespace

TEST_CASE("An update hook sees the updated values before after_run and keeps the update fused",
          "[gradient_hooks][update_event]") {
  using Sgd = hf::GradientDescentOptimizer;
  // It pins no gradient: the fused update stays on (a gradient hook turns it off, above).
  STATIC_REQUIRE(SessionOf<Sgd, UpdateObserver>::update_fused<"W">);
  STATIC_REQUIRE(SessionOf<Sgd, UpdateObserver>::update_fused<"b">);
  STATIC_REQUIRE(SessionOf<hf::MomentumOptimizer, UpdateObserver>::update_fused<"W">);
  STATIC_REQUIRE(hf::DeclaresAfterApplyGradients<UpdateObserver>);
  STATIC_REQUIRE_FALSE(hf::GradientHook<UpdateObserver>);
  // x = 2, y = 1: pred = 7, dW = 2 (7 - 1) 2 = 24, db = 12; SGD 0.1: W = 0.6, b = -0.2. The
  // logger comes first in hook order, and its after_run still comes after the update event,
  // with the incremented step; the event sees the step before the increment.
  Model m;
  Events log;
  UpdateObserver observer;
  observer.log = &log;
  one_step(m, Sgd(0.1), hf::hooks(RunLogger{&log}, std::ref(observer)), 2.0, 1.0);
  CHECK(log == Events{"after_apply_gradients", "after_run 1"});
  CHECK(observer.step == 0);
  CHECK(observer.rows == 1);
  CHECK(same_tensors(observer.seen, {{"W", 0.6}, {"b", -0.2}}));
}

TEST_CASE("An update hook sees each variable's Momentum slot after it",
          "[gradient_hooks][update_event]") {
  // TF ApplyMomentum: accum = 0.9 accum + g, var -= lr accum. Step 1 (x = 2, y = 1): g = (24,
  // 12), accum = (24, 12), W = 3 - 2.4 = 0.6, b = 1 - 1.2 = -0.2. Step 2: pred = 2 (0.6) - 0.2
  // = 1 = y, g = 0: accum = (21.6, 10.8), W = 0.6 - 2.16 = -1.56, b = -0.2 - 1.08 = -1.28.
  Model m;
  UpdateObserver observer;
  hf::MonitoredTrainingSession s(hf::MomentumOptimizer(0.1, 0.9).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(1), hf::hooks(std::ref(observer)));
  const double x = 2.0, y = 1.0;
  s.run(hf::feed<"x">(&x, 1, 1), hf::feed<"y">(&y, 1, 1));
  CHECK(same_tensors(observer.seen,
                     {{"W", 0.6}, {"W/Momentum", 24.0}, {"b", -0.2}, {"b/Momentum", 12.0}}));
  s.run(hf::feed<"x">(&x, 1, 1), hf::feed<"y">(&y, 1, 1));
  CHECK(same_tensors(observer.seen,
                     {{"W", -1.56}, {"W/Momentum", 21.6}, {"b", -1.28}, {"b/Momentum", 10.8}}));
  CHECK(observer.step == 1);
  CHECK(observer.calls == 2);
}

TEST_CASE("What an update hook writes is what later hooks and checkpoints see",
          "[gradient_hooks][update_event]") {
  // ZeroB sets b to 0 after the update; the observer after it sees W = 0.6 (3 - 0.1 * 24) and
  // b = 0, as do the variables and the checkpoint list afterwards.
  Model m;
  UpdateObserver observer;
  hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs),
                                 hf::caller_feeds(1), hf::hooks(ZeroB{}, std::ref(observer)));
  const double x = 2.0, y = 1.0;
  s.run(hf::feed<"x">(&x, 1, 1), hf::feed<"y">(&y, 1, 1));
  CHECK(same_tensors(observer.seen, {{"W", 0.6}, {"b", 0.0}}));
  CHECK(m.b.value(0, 0) == 0.0);
  bool found = false;
  for (const hf::CheckpointVariable& v : s.variables())
    if (v.name == "b") {
      found = true;
      CHECK(v.values<double>()[0] == 0.0);
    }
  CHECK(found);
  // Step 2 from W = 0.6, b = 0: pred = 1.2, dW = 2 (0.2) 2 = 0.8, W = 0.6 - 0.08 = 0.52.
  s.run(hf::feed<"x">(&x, 1, 1), hf::feed<"y">(&y, 1, 1));
  CHECK(same_tensors(observer.seen, {{"W", 0.52}, {"b", 0.0}}));
}

TEST_CASE("An update hook is called every run: it turns the idle fast path off",
          "[gradient_hooks][update_event]") {
  Model m;
  UpdateObserver observer;
  hf::MonitoredTrainingSession s(
      hf::GradientDescentOptimizer(0.1).minimize(m.loss(), m.gs), hf::caller_feeds(1),
      hf::hooks(hf::LoggingTensorHook<"loss">({.every_n_iter = 100}), std::ref(observer)));
  STATIC_REQUIRE_FALSE(decltype(s)::skips_idle_runs);
  const double x = 2.0, y = 1.0;
  for (int i = 0; i < 5; ++i) s.run(hf::feed<"x">(&x, 1, 1), hf::feed<"y">(&y, 1, 1));
  CHECK(observer.calls == 5);
  CHECK(observer.step == 4);
}
