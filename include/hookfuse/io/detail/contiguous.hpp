// hookfuse/io/detail/contiguous.hpp: the ranges the io writers copy tensors from.
#pragma once

#include <iterator>     // std::begin, std::end, std::data, std::size, std::contiguous_iterator
#include <type_traits>

namespace hookfuse::io::detail {

/// A range whose elements lie contiguously in memory (std::vector, std::array, std::span, a C
/// array): what std::ranges::contiguous_range asks, spelled with <iterator>'s std::begin,
/// std::data and std::size so that the io headers do not include <ranges> (its views cost every
/// translation unit of the umbrella header about 0.1 s to parse and are used nowhere here). An
/// Eigen matrix is not one (no contiguous iterator): its storage order is not the checkpoint's.
template <class R>
concept ContiguousRange = requires(const R& r) {
  { std::begin(r) } -> std::contiguous_iterator;
  std::end(r);
  requires std::is_pointer_v<decltype(std::data(r))>;
  std::size(r);
};

/// The element type of a ContiguousRange, without const or volatile.
template <class R>
using contiguous_element_t =
    std::remove_cv_t<std::remove_pointer_t<decltype(std::data(std::declval<const R&>()))>>;

}  // namespace hookfuse::io::detail
