// embedded/strip_errors: a host program built like an embedded one (-fno-exceptions,
// HOOKFUSE_EMBEDDED) with HOOKFUSE_STRIP_ERROR_STRINGS, run by ctest
// (embedded.strip_error_strings_*): an error reaches error_handler as the one fixed text
// hookfuse/config.hpp documents, whether it comes from an argument check ("argument": a negative
// learning rate) or from a message built with detail::ErrorMessage ("message").
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <hookfuse/hookfuse.hpp>

#ifndef HOOKFUSE_STRIP_ERROR_STRINGS
#error "embedded/strip_errors is built with HOOKFUSE_STRIP_ERROR_STRINGS"
#endif

// Prints what it gets and exits with status 3: the test expects that status and that line.
[[noreturn]] void hookfuse::error_handler(std::string_view what) {
  std::printf("error_handler: %.*s\n", static_cast<int>(what.size()), what.data());
  std::fflush(stdout);
  std::exit(3);
}

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "argument") {
    // Hosted: std::invalid_argument("GradientDescentOptimizer: learning_rate must be ...").
    const hookfuse::GradientDescentOptimizer optimizer(-1.0f);
    (void)optimizer;
  } else if (mode == "message") {
    hookfuse::detail::fail<hookfuse::ShapeError>(
        (hookfuse::detail::ErrorMessage() << "feed 'x': got " << 3 << " columns, expected "
                                          << 4.5f)
            .str());
  } else {
    std::printf("usage: strip_errors argument|message\n");
    return 1;
  }
  std::printf("no error\n");
  return 0;
}
