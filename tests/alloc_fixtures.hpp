// tests/alloc_fixtures.hpp: what the allocation-count tests train on and log to: random examples
// allocated before the session, an input that walks through them without allocating, and a
// logger that only counts its lines.
//
// Include it after alloc_counter.hpp (which must come before any Eigen header).
#pragma once

#include <cstddef>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <random>
#include <string_view>
#include <vector>

namespace hookfuse_test {

/// `examples` examples drawn from std::mt19937(seed): first every feature (`n_features` floats
/// per example, uniform in [0, 1)), then every label (int32, uniform in [0, classes)).
struct RandomExamples {
  std::vector<float> features;
  std::vector<std::int32_t> labels;
  RandomExamples(unsigned seed, hookfuse::Index examples, int n_features, int classes)
      : features(static_cast<std::size_t>(examples * n_features)),
        labels(static_cast<std::size_t>(examples)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
    std::uniform_int_distribution<std::int32_t> label(0, classes - 1);
    for (auto& v : features) v = pixel(rng);
    for (auto& v : labels) v = label(rng);
  }
};

/// Feeds "x" ([Batch, Features] float) and "labels" ([Batch] int32) from vectors allocated up
/// front (Examples * Features floats, Examples labels); next() walks through them in batches of
/// Batch, forever. Examples must be a multiple of Batch.
template <hookfuse::Index Batch, hookfuse::Index Examples, int Features>
struct PreallocatedInput {
  static_assert(Batch > 0 && Examples % Batch == 0,
                "PreallocatedInput: Examples must be a positive multiple of Batch");
  const std::vector<float>* features;
  const std::vector<std::int32_t>* labels;
  hookfuse::Index offset = -Batch;
  bool next() {
    offset = (offset + Batch) % Examples;
    return true;
  }
  hookfuse::Index batch_size() const { return Batch; }
  template <class G>
  void feed(G& g) {
    g.template feed<"x">(features->data() + offset * Features, Batch, Features);
    g.template feed<"labels">(labels->data() + offset, Batch);
  }
};

/// A logger that adds one to *lines per line and keeps nothing: it never allocates.
struct LineCountingLogger {
  int* lines;
  void log(hookfuse::Severity, std::string_view) const { ++*lines; }
};

}  // namespace hookfuse_test
