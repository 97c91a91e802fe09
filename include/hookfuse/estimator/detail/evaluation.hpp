// hookfuse/estimator/detail/evaluation.hpp: the pieces of Estimator::evaluate that do not
// depend on the model: metric inputs as Eigen maps over fetched values, numpy's printing of a
// float32, and the evaluation's log line and event file.
#pragma once

#include <Eigen/Core>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "hookfuse/estimator/estimator_args.hpp"
#include "hookfuse/fixed_string.hpp"
#include "hookfuse/hooks/logging_tensor_hook.hpp"
#include "hookfuse/hooks/session_run_hook.hpp"
#include "hookfuse/io/summary_proto.hpp"
#include "hookfuse/io/summary_writer_cache.hpp"
#include "hookfuse/logging.hpp"

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
