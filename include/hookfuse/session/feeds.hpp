// hookfuse/session/feeds.hpp: connects an input function to the model's placeholders.
#pragma once

#include <concepts>

#include "hookfuse/autodiff/storage.hpp"
#include "hookfuse/fixed_string.hpp"

namespace hookfuse {

/// An input function as the session uses it: next() moves to the next minibatch and returns
/// false at the end of the data (TensorFlow's OutOfRangeError: training ends cleanly);
/// batch_size() is the largest number of rows a batch can have; feed(graph) points the graph's
/// placeholders at the current batch.
template <class I, class G>
concept InputFor = requires(I& in, G& g) {
  { in.next() } -> std::convertible_to<bool>;
  { in.batch_size() } -> std::convertible_to<Index>;
  in.feed(g);
};

/// Feeds a features/labels input function (such as data::NumpyInputFn) into two placeholders:
/// the features [batch, num_features] into `Features`, the labels [batch] into `Labels`.
/// Keeps a reference: `input` must outlive the session.
template <class In, fixed_string Features, fixed_string Labels>
struct Feeds {
  In* input;
  bool next() { return input->next(); }
  Index batch_size() const { return static_cast<Index>(input->batch_size()); }
  template <class G>
  void feed(G& graph) {
    const auto rows = static_cast<Index>(input->rows());
    graph.template feed<Features>(input->features_data(), rows);
    graph.template feed<Labels>(input->labels_data(), rows);
  }
};

/// `feeds<"x", "labels">(input_fn)`: the input function's features go to placeholder "x", its
/// labels to placeholder "labels".
template <fixed_string Features, fixed_string Labels, class In>
Feeds<In, Features, Labels> feeds(In& input) {
  return {&input};
}

}  // namespace hookfuse
