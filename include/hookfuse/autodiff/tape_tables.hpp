// hookfuse/autodiff/tape_tables.hpp: what a bound graph asks of its tape at compile time, read
// from tables computed once per tape.
//
// The questions: which entries a tensor reads (directly or not), how often an entry is an
// operand, whether an operand's adjoint gets its first contribution at a given op, whether a
// variable's only consumer lets its update be fused, and the name of an entry. Asked entry by
// entry through recursive templates and folds over the whole tape, they cost one template
// instantiation per pair of entries, so a model's compile time would grow with the square of its
// size (a model of L dense layers has 5L + 3 entries). Here each is one constexpr array per tape (or
// per tape and target entry), filled by a loop; a query reads one element.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>

#include "hookfuse/autodiff/tape.hpp"

namespace hookfuse::detail {

/// Whether the backward pass of Op reads its operands' values (true unless the op declares
/// `backward_reads_operands = false`, as an addition does).
template <class Op>
constexpr bool backward_reads_operands() {
  if constexpr (requires { Op::backward_reads_operands; }) return Op::backward_reads_operands;
  else return true;
}

template <class E>
inline constexpr bool is_variable_entry_v = requires { typename E::variable_type; };
template <class E>
inline constexpr bool is_placeholder_entry_v = requires { typename E::placeholder_type; };
template <class E>
constexpr bool entry_reads_operands() {
  if constexpr (requires { typename E::op_type; })
    return backward_reads_operands<typename E::op_type>();
  else
    return false;  // a Variable or Placeholder: no operands
}

/// The structure of a tape of N entries with T operands in all (an operand used twice by one
/// op counts twice).
template <std::size_t N, std::size_t T>
struct TapeShape {
  /// The operands (tape positions) of entry I are operands[first_operand[I]] up to, not
  /// including, operands[first_operand[I + 1]], in the op's order.
  std::array<std::size_t, N + 1> first_operand{};
  std::array<std::size_t, T> operands{};
  std::array<bool, N> requires_grad{};
  std::array<bool, N> is_variable{};
  std::array<bool, N> is_placeholder{};
  /// The entry is an op whose backward pass reads its operands' values.
  std::array<bool, N> reads_operands{};
};

/// The most operands an op has (a matmul, an addition: 2). The graph's per-entry functions take
/// an op's operand slots as three arguments (see operand_triples).
inline constexpr std::size_t max_operands = 3;

template <class... Es>
constexpr auto make_tape_shape() {
  static_assert(((Es::children.size() <= max_operands) && ...),
                "hookfuse: an op has more operands than detail::max_operands");
  TapeShape<sizeof...(Es), (std::size_t{0} + ... + Es::children.size())> s;
  std::size_t i = 0, p = 0;
  auto add = [&](const auto& children, bool requires_grad, bool variable, bool placeholder,
                 bool reads_operands) {
    s.first_operand[i] = p;
    for (std::size_t c : children) s.operands[p++] = c;
    s.requires_grad[i] = requires_grad;
    s.is_variable[i] = variable;
    s.is_placeholder[i] = placeholder;
    s.reads_operands[i] = reads_operands;
    ++i;
  };
  (add(Es::children, Es::requires_grad, is_variable_entry_v<Es>, is_placeholder_entry_v<Es>,
       entry_reads_operands<Es>()),
   ...);
  s.first_operand[i] = p;
  return s;
}

template <class Entries>
struct tape_tables;
template <class Seq, class... Es>
struct tape_tables<FlatTupleImpl<Seq, Es...>> {
  static constexpr auto shape = make_tape_shape<Es...>();
};

/// The TapeShape of a finished tape (Entries: its FlatTuple of entries).
template <class Entries>
inline constexpr const auto& tape_shape = tape_tables<Entries>::shape;

/// reach[I]: entry I is entry `target` or lies below it (target reads it, directly or not).
/// Children precede their parents, so one walk down from `target` marks them all.
template <std::size_t N, std::size_t T>
constexpr std::array<bool, N> reach_from(const TapeShape<N, T>& s, std::size_t target) {
  std::array<bool, N> reach{};
  reach[target] = true;
  for (std::size_t i = target + 1; i-- > 0;) {
    if (!reach[i]) continue;
    for (std::size_t p = s.first_operand[i]; p < s.first_operand[i + 1]; ++p)
      reach[s.operands[p]] = true;
  }
  return reach;
}
/// reach_table<Entries, Target>[I]: entry I is Target or lies below it.
template <class Entries, std::size_t Target>
inline constexpr std::array<bool, std::tuple_size_v<Entries>> reach_table =
    reach_from(tape_shape<Entries>, Target);

/// Which entries a position_list holds.
enum class EntryKind {
  op,           // the entries computed by an op
  variable,     // the Variables
  placeholder,  // the Placeholders
  not_variable, // the ops and the placeholders
  reached_op,   // the ops that entry Last reads, directly or not, and Last itself if an op
  reached_placeholder  // the Placeholders that entry Last reads, directly or not
};

/// The tape positions, in tape order, of the entries at positions 0..Last that are of `Kind`.
/// The graph's per-entry loops go over such a list instead of over every position: a loop body
/// instantiated once per tape entry would be a function whose symbol spells the whole tape, and
/// the compiler's work would grow with the square of the model's size.
template <class Entries, EntryKind Kind, std::size_t Last>
struct position_list {
  static constexpr bool holds(std::size_t i) {
    const auto& s = tape_shape<Entries>;
    // Only a reached_op list reads (and so builds) the reach table.
    if constexpr (Kind == EntryKind::reached_op) {
      return !s.is_variable[i] && !s.is_placeholder[i] && reach_table<Entries, Last>[i];
    } else if constexpr (Kind == EntryKind::reached_placeholder) {
      return s.is_placeholder[i] && reach_table<Entries, Last>[i];
    } else {
      switch (Kind) {
        case EntryKind::op: return !s.is_variable[i] && !s.is_placeholder[i];
        case EntryKind::variable: return s.is_variable[i];
        case EntryKind::placeholder: return s.is_placeholder[i];
        case EntryKind::not_variable: return !s.is_variable[i];
        case EntryKind::reached_op: break;
        case EntryKind::reached_placeholder: break;
      }
      return false;
    }
  }
  static constexpr std::size_t count = [] {
    std::size_t n = 0;
    for (std::size_t i = 0; i <= Last; ++i) n += holds(i) ? 1 : 0;
    return n;
  }();
  static constexpr std::array<std::size_t, count> positions = [] {
    std::array<std::size_t, count> out{};
    std::size_t n = 0;
    for (std::size_t i = 0; i <= Last; ++i)
      if (holds(i)) out[n++] = i;
    return out;
  }();
};

template <class List, bool Reversed, class Seq = std::make_index_sequence<List::count>>
struct positions_of;
template <class List, bool Reversed, std::size_t... J>
struct positions_of<List, Reversed, std::index_sequence<J...>> {
  using type =
      std::index_sequence<List::positions[Reversed ? List::count - 1 - J : J]...>;
};
/// The positions of a position_list as a std::index_sequence, for a fold over them (last first
/// when Reversed).
template <class List, bool Reversed = false>
using position_sequence = typename positions_of<List, Reversed>::type;

/// Entry I of the tape is a placeholder that entry Target reads.
template <class Entries, std::size_t Target, std::size_t I>
constexpr bool reads_placeholder() {
  return tape_shape<Entries>.is_placeholder[I] && reach_table<Entries, Target>[I];
}

/// uses[C]: how often entry C is an operand of the entries at positions 0..last.
template <std::size_t N, std::size_t T>
constexpr std::array<std::size_t, N> operand_counts(const TapeShape<N, T>& s, std::size_t last) {
  std::array<std::size_t, N> uses{};
  for (std::size_t p = 0; p < s.first_operand[last + 1]; ++p) ++uses[s.operands[p]];
  return uses;
}
/// How often each entry is an operand of the entries at positions 0..Last of the tape.
template <class Entries, std::size_t Last>
inline constexpr std::array<std::size_t, std::tuple_size_v<Entries>> operand_count =
    operand_counts(tape_shape<Entries>, Last);

/// consumer[C]: the last entry at a position up to `last` that requires a gradient and has entry
/// C as an operand (npos: none). The backward pass visits entries from the last down, so that
/// one is where C's adjoint gets its first contribution.
template <std::size_t N, std::size_t T>
constexpr std::array<std::size_t, N> last_grad_consumers(const TapeShape<N, T>& s,
                                                         std::size_t last) {
  std::array<std::size_t, N> consumer{};
  consumer.fill(npos);
  for (std::size_t j = 0; j <= last; ++j) {
    if (!s.requires_grad[j]) continue;
    for (std::size_t p = s.first_operand[j]; p < s.first_operand[j + 1]; ++p)
      consumer[s.operands[p]] = j;
  }
  return consumer;
}
template <class Entries, std::size_t Last>
inline constexpr std::array<std::size_t, std::tuple_size_v<Entries>> last_grad_consumer =
    last_grad_consumers(tape_shape<Entries>, Last);

/// Backward writes (a pass over entries Last down to 0): first[P] for the operand at index P of
/// TapeShape::operands (operand K of entry J): does it receive its first contribution there?
/// Yes unless an earlier operand of J is the same entry, or an entry after J (up to Last) that
/// requires a gradient also has it as an operand.
template <std::size_t N, std::size_t T>
constexpr std::array<bool, T> first_writes(const TapeShape<N, T>& s, std::size_t last) {
  const std::array<std::size_t, N> consumer = last_grad_consumers(s, last);
  std::array<bool, T> first{};
  for (std::size_t j = 0; j < N; ++j) {
    for (std::size_t p = s.first_operand[j]; p < s.first_operand[j + 1]; ++p) {
      const std::size_t c = s.operands[p];
      bool earlier = false;
      for (std::size_t q = s.first_operand[j]; q < p; ++q) earlier = earlier || s.operands[q] == c;
      first[p] = !earlier && (consumer[c] == npos || consumer[c] <= j);
    }
  }
  return first;
}
template <class Entries, std::size_t Last>
inline constexpr auto first_write_table = first_writes(tape_shape<Entries>, Last);
/// first_write_table for operand K of entry J.
template <class Entries, std::size_t Last, std::size_t J, std::size_t K>
constexpr bool first_write() {
  return first_write_table<Entries, Last>[tape_shape<Entries>.first_operand[J] + K];
}

/// The operands of each entry as three tape positions: entry I's operand K, or I itself past
/// its operand count (a filler, never read). The graph passes an op's operand slots to its
/// per-entry functions as three arguments, so that the fold over the ops needs no per-entry
/// helper (whose symbol would spell the whole tape).
template <std::size_t N, std::size_t T>
constexpr auto operand_positions(const TapeShape<N, T>& s) {
  std::array<std::array<std::size_t, max_operands>, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    out[i].fill(i);
    for (std::size_t p = s.first_operand[i]; p < s.first_operand[i + 1]; ++p)
      out[i][p - s.first_operand[i]] = s.operands[p];
  }
  return out;
}
template <class Entries>
inline constexpr auto operand_triples = operand_positions(tape_shape<Entries>);

/// allows[I]: every entry that has entry I as an operand has no other Variable operand, or
/// reads no operand in its backward pass (see Graph::update_fused_at).
template <std::size_t N, std::size_t T>
constexpr std::array<bool, N> consumers_allow_fusion_table(const TapeShape<N, T>& s) {
  std::array<bool, N> allows{};
  allows.fill(true);
  for (std::size_t j = 0; j < N; ++j) {
    if (!s.reads_operands[j]) continue;
    const std::size_t begin = s.first_operand[j], end = s.first_operand[j + 1];
    for (std::size_t p = begin; p < end; ++p)
      for (std::size_t q = begin; q < end; ++q)
        if (s.operands[q] != s.operands[p] && s.is_variable[s.operands[q]])
          allows[s.operands[p]] = false;
  }
  return allows;
}
template <class Entries>
inline constexpr std::array<bool, std::tuple_size_v<Entries>> consumers_allow_fusion =
    consumers_allow_fusion_table(tape_shape<Entries>);

/// One name of the tape: the entry it names.
struct NameAt {
  std::size_t index;
  std::string_view name;
};
template <class Names>
struct name_table;
template <class... Ns>
struct name_table<NameList<Ns...>> {
  static constexpr std::array<NameAt, sizeof...(Ns)> names{NameAt{Ns::index, Ns::name.view()}...};
};

/// The first name that `names` gives tape entry i, or empty.
template <std::size_t K>
constexpr std::string_view first_name_of(const std::array<NameAt, K>& names, std::size_t i) {
  for (const NameAt& n : names)
    if (n.index == i) return n.name;
  return {};
}

/// The (first) name of tape entry I, or empty.
template <class Names, std::size_t I>
constexpr std::string_view name_at() {
  return first_name_of(name_table<Names>::names, I);
}

/// The (first) name of each of the N tape entries, or empty: one table per tape.
template <class Names, std::size_t N>
inline constexpr std::array<std::string_view, N> position_names = [] {
  std::array<std::string_view, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = first_name_of(name_table<Names>::names, i);
  return out;
}();

}  // namespace hookfuse::detail
