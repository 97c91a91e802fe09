// hookfuse/detail/compile_error.hpp: compile errors whose first line says in plain text what is
// wrong: the hook or placeholder, the name or type at fault, the model's own tensor names and,
// for a misspelt name, the closest of them ("did you mean").
#pragma once

#include <cstddef>
#include <string_view>

#include "hookfuse/detail/type_name.hpp"
#include "hookfuse/fixed_string.hpp"

namespace hookfuse {

/// Declared, never defined. A check that fails names compile_error<message> where a complete
/// type is needed (detail::raise_compile_error), so the compiler's first `error:` line quotes the
/// message; with GCC:
///
///     error: invalid application of 'sizeof' to incomplete type
///     'hookfuse::compile_error<hookfuse::fixed_string<N>{"hook `MyHook` fetches `lossx`, ..."}>'
///
/// A static_assert message is fixed text, and a template's arguments (where the names are) come
/// only in the instantiation lines above the error, which spell the whole model. Clang 14 prints
/// the argument as character codes; its notes name the failing check (check_fetch<Hook, ...>).
template <fixed_string Message>
struct compile_error;

namespace detail {

/// A message under construction (at compile time): at most `capacity - 1` characters, longer
/// text ends in "...".
struct message_text {
  static constexpr std::size_t capacity = 2048;
  char data[capacity]{};
  std::size_t size = 0;

  constexpr message_text& operator<<(std::string_view s) {
    for (char c : s) {
      if (size + 4 >= capacity) {
        if (size + 4 == capacity) {
          for (char d : std::string_view("...")) data[size++] = d;
        }
        return *this;
      }
      data[size++] = c;
    }
    return *this;
  }
  constexpr message_text& operator<<(std::size_t n) {
    char digits[20]{};
    std::size_t count = 0;
    do {
      digits[count++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n != 0);
    while (count > 0) {
      const char c[1] = {digits[--count]};
      *this << std::string_view(c, 1);
    }
    return *this;
  }
};

/// The first `N` characters of `m` as a fixed_string of exactly that length (a longer array
/// would print its padding as "\000" in the diagnostic).
template <std::size_t N>
consteval fixed_string<N + 1> message_string(message_text m) {
  fixed_string<N + 1> out;
  for (std::size_t i = 0; i < N; ++i) out.data[i] = m.data[i];
  return out;
}

/// Fails to compile with `Message` as the first line of the error: `(void)raise_compile_error<
/// message>::value;` in a failing check's `if constexpr` branch, for a check that is itself
/// evaluated as a constant (`if constexpr (check<...>())`): a class, whose static member is
/// instantiated on its own, so the check stays a valid constant expression and its caller gets
/// no second error. A check that is not evaluated as a constant names
/// `sizeof(compile_error<message>)` itself: one instantiation line fewer above the error.
template <fixed_string Message>
struct raise_compile_error {
  static constexpr bool value = sizeof(compile_error<Message>) == 0;
};

/// Levenshtein distance between `a` and `b` (insertions, deletions and substitutions of one
/// character); names longer than 63 characters count as far from everything.
constexpr std::size_t edit_distance(std::string_view a, std::string_view b) {
  constexpr std::size_t max_len = 63;
  if (a.size() > max_len || b.size() > max_len) return static_cast<std::size_t>(-1);
  std::size_t row[max_len + 1]{};
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      const std::size_t insert = row[j - 1] + 1;
      const std::size_t erase = above + 1;
      std::size_t best = substitute < insert ? substitute : insert;
      row[j] = best < erase ? best : erase;
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// The name of the `count` `names` closest to `name` if it is close enough to be what was meant
/// (fewer edits than `name` has characters, and at most 1 + size / 5: one edit for a name of up
/// to 4 characters, two up to 9, three up to 14), else "".
constexpr std::string_view closest_name(std::string_view name, const std::string_view* names,
                                        std::size_t count) {
  const std::size_t by_size = 1 + name.size() / 5;
  const std::size_t limit = by_size < name.size() ? by_size : name.size() - 1;
  std::string_view best;
  std::size_t best_distance = limit + 1;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string_view candidate = names[i];
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance && d != 0) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

/// Appends "; did you mean `x`?" (when one of the `count` `names` is close to `name`, else ".")
/// and " Tensors of the model: a, b, c." to `m`.
constexpr void append_names(message_text& m, std::string_view name, const std::string_view* names,
                            std::size_t count) {
  if (std::string_view close = closest_name(name, names, count); !close.empty())
    m << "; did you mean `" << close << "`?";
  else
    m << ".";
  if (count == 0) {
    m << " The model has no named tensors.";
    return;
  }
  m << " Tensors of the model: ";
  for (std::size_t i = 0; i < count; ++i) m << (i == 0 ? "" : ", ") << names[i];
  m << ".";
}

/// The names of a NameList (tape_names.hpp) followed by `extra`, for messages. A class with a
/// static member rather than a function taking the list, so that no function's symbol spells it.
template <class List, fixed_string... Extra>
struct list_names;
template <template <class...> class L, class... Ns, fixed_string... Extra>
struct list_names<L<Ns...>, Extra...> {
  static constexpr std::string_view value[sizeof...(Ns) + sizeof...(Extra) + 1] = {
      std::string_view(Ns::name)..., std::string_view(Extra)..., std::string_view()};
  // The last element only keeps the array non-empty; names_of drops it.
};

/// Appends the names of `List` (and `Extra`) as append_names does.
template <class List, fixed_string... Extra>
constexpr void append_list_names(message_text& m, std::string_view name) {
  constexpr auto& all = list_names<List, Extra...>::value;
  constexpr std::size_t n = sizeof(all) / sizeof(all[0]) - 1;
  std::string_view names[n == 0 ? 1 : n]{};
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {  // an Extra name may be on the list already
    bool seen = false;
    for (std::size_t j = 0; j < count; ++j) seen = seen || names[j] == all[i];
    if (!seen) names[count++] = all[i];
  }
  append_names(m, name, names, count);
}

/// The type name of T for a message ("MyHook", "hookfuse::StopAtStepHook").
template <class T>
constexpr std::string_view message_type_name() {
  return type_name<T>("this hook");
}

/// Fails to compile unless `Known`, with the error "<Where> `Name`, which is not a tensor of the
/// model; did you mean `...`? Tensors of the model: ..." (Names: the model's NameList, Extra:
/// names it also serves, such as "global_step"). Returns true either way, for
/// `static_assert(check_tensor_name<...>())`: the error above is the only one.
template <fixed_string Where, fixed_string Name, bool Known, class Names, fixed_string... Extra>
constexpr bool check_tensor_name() {
  if constexpr (!Known) {
    constexpr message_text m = [] {
      message_text t;
      t << Where.view() << " `" << Name.view() << "`, which is not a tensor of the model";
      append_list_names<Names, Extra...>(t, Name.view());
      return t;
    }();
    (void)raise_compile_error<message_string<m.size>(m)>::value;
  }
  return true;
}

}  // namespace detail
}  // namespace hookfuse
