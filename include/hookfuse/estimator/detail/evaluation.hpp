// hookfuse/estimator/detail/evaluation.hpp: the pieces of Estimator::evaluate that do not
// depend on the model: metric inputs as Eigen maps over fetched values, numpy's printing of a
// float32, the metrics summed across replicas, and the evaluation's log line and event file.
#pragma once

#include <Eigen/Core>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hookfuse/detail/format.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/estimator/estimator_args.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/logging_tensor_hook.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/io/summary_proto.hpp"
#include "hookfuse/io/summary_writer_cache.hpp"
#include "hookfuse/logging.hpp"
#include "hookfuse/metrics/mean.hpp"
#include "hookfuse/metrics/reduce.hpp"

namespace hookfuse::detail {

/// numpy's str() of a float32 scalar, as TensorFlow's "%s" % value prints a metric.
inline std::string float32_str(float v) {
  char buf[64];
  char* out = buf;
  append_tensor(out, buf + sizeof buf, TensorValue{&v, 1, 1, 1, 1, DType::float32}, 0);
  return std::string(buf, static_cast<std::size_t>(out - buf));
}

/// A metric input of scalar type T, as an Eigen map over the fetched values.
template <class T>
auto value_map(const TensorValue& t) {
  using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  return Eigen::Map<const M, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>(
      static_cast<const T*>(t.data), t.rows, t.cols,
      Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(t.row_stride, t.col_stride));
}

template <fixed_string... Names>
struct FetchNames {};
template <class... Es>
constexpr auto names_of(const boost::hana::tuple<Es...>&) {
  return FetchNames<Es::name...>{};
}

/// A metric's local variables when it has them (metrics::SummableMetric), none otherwise.
template <class M>
struct LocalVariablesOf {
  M* metric;
  template <class F>
  void for_each_local_variable(F&& f) {
    if constexpr (metrics::SummableMetric<M>) metric->for_each_local_variable(f);
  }
};

/// Before an evaluation on replicas: ValueError naming the first metric of `ops` whose local
/// variables cannot be summed (no for_each_local_variable) when the config has a
/// cross_replica_sum; a warning that each replica reports its own shard when num_worker_replicas
/// > 1 and there is no cross_replica_sum.
template <class Config, class Ops>
void check_replica_metrics(Config& config, const Ops& ops) {
  if (!config.cross_replica_sum) {
    if (config.num_worker_replicas > 1)
      config.logger.log(Severity::warning,
                        "Estimator.evaluate: RunConfig.num_worker_replicas is " +
                            std::to_string(config.num_worker_replicas) +
                            " but cross_replica_sum is not set: the metrics are this process's "
                            "alone (set both with with_replicas(config, comm))");
    return;
  }
  boost::hana::for_each(ops, [](const auto& op) {
    using Op = std::remove_cvref_t<decltype(op)>;
    if constexpr (!metrics::SummableMetric<typename Op::metric_type>)
      fail<ValueError>("Estimator.evaluate: metric '" + std::string(Op::name.view()) +
                       "' has no for_each_local_variable, so its local variables cannot be "
                       "summed across replicas (RunConfig.cross_replica_sum is set)");
  });
}

/// After an evaluation on replicas: the loss mean's and every metric's local variables replaced
/// by their sums over the replicas, in one call of config.cross_replica_sum.
template <class Config, class Ops>
void sum_across_replicas(const Config& config, metrics::Mean& loss, Ops& ops) {
  std::vector<float> buffer;
  boost::hana::unpack(ops, [&](auto&... op) {
    metrics::sum_local_variables(
        config.cross_replica_sum, buffer, loss,
        LocalVariablesOf<typename std::remove_cvref_t<decltype(op)>::metric_type>{&op.metric}...);
  });
}

/// At the end of a train() on replicas: waits until every replica has reached it (one
/// cross_replica_sum of one float, a barrier), so that the chief's last checkpoint is written
/// before any replica's next train() or evaluate() reads model_dir. No-op without a sum.
template <class Config>
void wait_for_replicas(const Config& config) {
  if (!config.cross_replica_sum) return;
  float arrived = 1.0f;
  config.cross_replica_sum(std::span<float>(&arrived, 1));
}

/// After an evaluation: logs "Saving dict for global step N: k = v, ..." (metrics sorted by
/// name, global_step among them, as TensorFlow's dict prints) and writes each metric as a
/// scalar summary at step N into model_dir/eval (or eval_<name>).
template <class Lg>
void write_eval_summary(Lg& logger, const std::string& model_dir, const EvalResult& r,
                        const std::string& name) {
  std::string line = "Saving dict for global step " + std::to_string(r.global_step) + ": ";
  std::map<std::string, std::string> shown;
  for (const auto& [k, v] : r.metrics) shown[k] = float32_str(v);
  shown["global_step"] = std::to_string(r.global_step);
  bool first = true;
  for (const auto& [k, v] : shown) {
    if (!first) line += ", ";
    first = false;
    line += k + " = " + v;
  }
  logger.log(Severity::info, line);
  const std::filesystem::path dir =
      std::filesystem::path(model_dir) / (name.empty() ? "eval" : "eval_" + name);
  auto writer = io::SummaryWriterCache::get(dir);
  io::Summary s;
  for (const auto& [k, v] : r.metrics)
    s.value.push_back(io::scalar_value(k, v, io::ScalarForm::simple_value));
  writer->add_summary(std::move(s), r.global_step);
  writer->flush();
}

}  // namespace hookfuse::detail
