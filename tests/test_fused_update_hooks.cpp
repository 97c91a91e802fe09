// tests/test_fused_update_hooks.cpp: the fused optimizer update (see test_fused_update.cpp)
// when a hook requests a gradient (that variable alone stays unfused) or a variable (it sees
// the run's update either way).
#include "fused_update_fixture.hpp"

TEST_CASE("a hook requesting a gradient gets it, and only that variable stays unfused",
          "[fused_update]") {
  GradientProbe probe_out;
  auto result = train<double>(3, GradientProbe{}, [&](auto& s) {
    using Session = std::remove_cvref_t<decltype(s)>;
    STATIC_REQUIRE_FALSE(Session::template update_fused<"dense/kernel">);
    STATIC_REQUIRE(Session::template update_fused<"dense/bias">);
    STATIC_REQUIRE(Session::template update_fused<"logits/kernel">);
    s.run();
    probe_out = boost::hana::at_c<0>(s.hooks());
  });
  // The reference: a graph of the same (initial) model, backward() with stored gradients.
  Mlp<double> ref;
  FixedBatch<double> batch;
  auto graph = hf::bind(kBatch, ref.loss());
  batch.feed(graph);
  graph.forward();
  graph.backward();
  REQUIRE(probe_out.kernel_grad.rows() == kIn);
  REQUIRE(probe_out.kernel_grad.cols() == kHidden);
  const Eigen::MatrixXd expected_kernel = ref.hidden.kernel.grad;
  CHECK((probe_out.kernel_grad - expected_kernel).norm() <= 1e-12 * expected_kernel.norm());
  const Eigen::MatrixXd expected_logits = graph.adjoint<"logits">();
  REQUIRE(probe_out.logits_grad.rows() == kBatch);
  CHECK((probe_out.logits_grad - expected_logits).norm() <= 1e-12 * expected_logits.norm());
  CHECK(expected_kernel.norm() > 0);
  // Unfused variable: its gradient is stored; fused ones: never written.
  CHECK_FALSE(result[0].second.isZero(0));
  CHECK(result[1].second.isZero(0));
}

TEST_CASE("a hook requesting a variable gets a view showing the run's update, fused or not",
          "[fused_update]") {
  Mlp<double> m;
  const Eigen::MatrixXd before = m.output.kernel.value;
  hf::MonitoredTrainingSession session(m.train_op(), FixedBatch<double>{},
                                       hf::hooks(KernelValueProbe{}));
  using Session = decltype(session);
  STATIC_REQUIRE(Session::update_fused<"logits/kernel">);  // a value fetch does not pin
  session.run();
  const auto& probe = boost::hana::at_c<0>(session.hooks());
  CHECK(probe.first == Eigen::MatrixXd(m.output.kernel.value));
  CHECK(probe.first != before);
}
