// tests/test_compile_error.cpp: the pieces of the readable compile errors
// (hookfuse/detail/compile_error.hpp): edit distance, "did you mean", the message buffer. The
// errors themselves are checked by tests/compile_fail/ (docs/compile-errors.md).
#include <catch2/catch.hpp>

#include <string_view>

#include "hookfuse/detail/compile_error.hpp"

using hookfuse::detail::closest_name;
using hookfuse::detail::edit_distance;
using hookfuse::detail::message_string;
using hookfuse::detail::message_text;

TEST_CASE("edit_distance counts insertions, deletions and substitutions") {
  // Textbook values of the Levenshtein distance.
  STATIC_REQUIRE(edit_distance("kitten", "sitting") == 3);
  STATIC_REQUIRE(edit_distance("flaw", "lawn") == 2);
  STATIC_REQUIRE(edit_distance("", "abc") == 3);
  STATIC_REQUIRE(edit_distance("abc", "") == 3);
  STATIC_REQUIRE(edit_distance("loss", "loss") == 0);
  STATIC_REQUIRE(edit_distance("lossx", "loss") == 1);
  STATIC_REQUIRE(edit_distance("dense/kernal", "dense/kernel") == 1);
  STATIC_REQUIRE(edit_distance("W", "w") == 1);
}

TEST_CASE("edit_distance of a name over 63 characters is the largest size_t") {
  constexpr std::string_view long_name =
      "a_name_of_sixty_four_characters_which_is_longer_than_the_buffer_";
  STATIC_REQUIRE(long_name.size() == 64);
  STATIC_REQUIRE(edit_distance(long_name, "a") == static_cast<std::size_t>(-1));
}

TEST_CASE("closest_name suggests a name a few edits away, and none that is far") {
  constexpr std::string_view names[] = {"x", "dense/kernel", "logits", "loss", "global_step"};
  STATIC_REQUIRE(closest_name("lossx", names, 5) == "loss");     // 1 edit
  STATIC_REQUIRE(closest_name("logit", names, 5) == "logits");   // 1 edit
  STATIC_REQUIRE(closest_name("dense/kernal", names, 5) == "dense/kernel");
  STATIC_REQUIRE(closest_name("globl_stp", names, 5) == "global_step");  // 2 edits, 9 chars
  STATIC_REQUIRE(closest_name("acc", names, 5).empty());   // 3 edits from "x": too far
  STATIC_REQUIRE(closest_name("y", names, 5).empty());     // 1 edit, but as long as the name
  STATIC_REQUIRE(closest_name("loss", names, 5).empty());  // the name itself: nothing to suggest
  STATIC_REQUIRE(closest_name("los", names, 0).empty());   // no names
}

TEST_CASE("message_text appends text and numbers, and cuts long text with an ellipsis") {
  constexpr message_text m = [] {
    message_text t;
    t << "rows " << std::size_t{0} << ", cols " << std::size_t{1234567890};
    return t;
  }();
  STATIC_REQUIRE(std::string_view(m.data, m.size) == "rows 0, cols 1234567890");
  STATIC_REQUIRE(message_string<m.size>(m).view() == "rows 0, cols 1234567890");
  STATIC_REQUIRE(decltype(message_string<m.size>(m))::size() == 23);

  constexpr message_text full = [] {
    message_text t;
    for (std::size_t i = 0; i < message_text::capacity; ++i) t << "ab";
    return t;
  }();
  STATIC_REQUIRE(full.size == message_text::capacity - 1);
  STATIC_REQUIRE(std::string_view(full.data, full.size).substr(full.size - 4) == "b...");
}
