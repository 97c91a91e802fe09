// hookfuse/config.hpp: build-mode switches and the error-handler policy.
//
// The knobs (define them on the command line, or with the CMake options of the same names, for
// every translation unit alike; docs/embedded.md has the details):
//
//   HOOKFUSE_NO_EXCEPTIONS  Errors call `hookfuse::error_handler(std::string_view)`, a
//                           user-supplied [[noreturn]] function, instead of throwing. Defined
//                           automatically when exceptions are off (-fno-exceptions).
//   HOOKFUSE_EMBEDDED       A build for a bare-metal target: implies HOOKFUSE_NO_EXCEPTIONS; error
//                           messages are formatted into a fixed stack buffer (no std::string) and
//                           log lines without the C library's printf family (no malloc, no
//                           stdio), see hookfuse/detail/format.hpp. Use fixed-size models
//                           (every Placeholder, Variable and Dense with compile-time sizes) and
//                           the core headers only: hookfuse/data/ reads files.
//   HOOKFUSE_HOST_FLOAT     The type of the library's own non-tensor numbers (hookfuse::host_float:
//                           hook values, clock seconds, timer intervals, learning rates, the
//                           numbers in log lines): double in hosted builds, float under
//                           HOOKFUSE_EMBEDDED, so that a float model pulls in no double
//                           arithmetic. Define it as double to have double there too.
//   HOOKFUSE_STRIP_ERROR_STRINGS  Opt-in, builds without exceptions only (like TensorFlow Lite
//                           Micro's TF_LITE_STRIP_ERROR_STRINGS): every error passes the same
//                           short fixed text (detail::kStrippedErrorText) to error_handler
//                           instead of a message naming the field and what was expected, so the
//                           messages' text and the code that formats them leave the binary.
//                           Off by default; docs/embedded.md, "Flash and RAM", has the sizes.
//   HOOKFUSE_CORE_ONLY      Defined by CMake's HOOKFUSE_CORE_ONLY: the build has no LevelDB,
//                           protozero or zlib, so <hookfuse/hookfuse.hpp> leaves out
//                           hookfuse/io (checkpoints); SessionOptions then needs a saver type.
//
// Hosted builds (the default) report errors by throwing the exception type named at the call
// site, with detailed messages.
#pragma once

#include <string_view>
#include <utility>

#if defined(HOOKFUSE_EMBEDDED) && !defined(HOOKFUSE_NO_EXCEPTIONS)
#define HOOKFUSE_NO_EXCEPTIONS 1
#endif
#if !defined(HOOKFUSE_NO_EXCEPTIONS) && !defined(__cpp_exceptions)
#define HOOKFUSE_NO_EXCEPTIONS 1
#endif
#if defined(HOOKFUSE_STRIP_ERROR_STRINGS) && !defined(HOOKFUSE_NO_EXCEPTIONS)
#error "HOOKFUSE_STRIP_ERROR_STRINGS needs a build without exceptions (HOOKFUSE_NO_EXCEPTIONS or HOOKFUSE_EMBEDDED): a thrown exception keeps its message"
#endif

/// Longest log line a built-in hook formats (on the stack), in characters including the NUL.
#ifndef HOOKFUSE_LOG_LINE_CAPACITY
#ifdef HOOKFUSE_EMBEDDED
#define HOOKFUSE_LOG_LINE_CAPACITY 160
#else
#define HOOKFUSE_LOG_LINE_CAPACITY 1024
#endif
#endif

/// Marks a function that runs rarely (a timer's trigger bookkeeping, an error path, the numpy-style
/// formatting of a logged tensor) so that the compiler keeps it out of line: the common path of
/// its callers stays small enough to inline into the fused step. GCC and Clang also optimise it
/// for size, which at -O3 halves the formatting's compile time in every translation unit that
/// logs. A hint only; nothing changes in what the code does.
#if defined(__GNUC__) || defined(__clang__)
#define HOOKFUSE_COLD [[gnu::cold, gnu::noinline]]
#else
#define HOOKFUSE_COLD
#endif

/// Keeps a function out of line: one that runs once (at bind) and whose body, inlined into its
/// caller, would make one function large enough for the optimiser's per-function work to grow
/// faster than the function (autodiff/graph_slots.hpp, make_slots). Unlike HOOKFUSE_COLD it does
/// not mark the function rarely run, so the compiler's estimate of how often the code around its
/// callers runs, and with it the training step's code, does not change. A hint only; nothing
/// changes in what the code does.
#if defined(__GNUC__) || defined(__clang__)
#define HOOKFUSE_NOINLINE [[gnu::noinline]]
#else
#define HOOKFUSE_NOINLINE
#endif

/// Marks a small forwarding function of the fused step (a per-hook lambda of the event folds)
/// that must always be inlined: GCC otherwise keeps some of these wrappers, one per hook type,
/// as functions until its inter-procedural inliner runs, where they count against the
/// translation unit's inline-unit-growth budget, and the hooks' own bodies are then left out of
/// line (bench/README.md, "Hook overhead"). The GNU spelling, because it is the one GCC and
/// Clang both apply to a lambda's call operator (`[](auto& h) HOOKFUSE_ALWAYS_INLINE {...}`).
#if defined(__GNUC__) || defined(__clang__)
#define HOOKFUSE_ALWAYS_INLINE __attribute__((always_inline))
#else
#define HOOKFUSE_ALWAYS_INLINE
#endif

/// Marks a function or lambda that the graph instantiates once per tape entry (or per node of the
/// model's expression: the builders relu, matmul, add, ..., make_node, Dense::operator(),
/// detail::get): force-inlined when the compiler does not optimise (-O0, where
/// GCC otherwise emits every instantiation as a function), left to the inliner when it does
/// (forcing them there changes its choices elsewhere in the step). The builders forward with
/// static_cast<X&&>, not std::forward, which -O0 would emit as a function per expression type.
/// Their template arguments are the entry's own types (detail::forward_op, detail::walk_tape),
/// never the whole tape's, so a copy the optimiser keeps out of line has a short symbol: were every
/// per-entry function to spell the tape in its symbol, the compiler's work would grow with the
/// square of the model's size (bench/README.md, "Growth with hooks and layers"). Even inlined,
/// such a function gets a symbol (GCC names every function it compiles, and every constant it
/// reads), so the per-node code avoids functions whose arguments are a node's subtree where it
/// can. Not for a function that recurses down the expression (detail::walk_tape,
/// detail::same_expr): forced inline, the copy for each node would hold its whole subtree, and
/// the work would again grow with the square of the model's depth.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__OPTIMIZE__)
#define HOOKFUSE_PER_ENTRY_INLINE __attribute__((always_inline))
#else
#define HOOKFUSE_PER_ENTRY_INLINE
#endif

/// Marks a function whose callees are all inlined into it when the compiler optimises
/// (GCC's and Clang's flatten): an optimizer's update of one variable (session/optimizer_slots.hpp)
/// is compiled once per scalar type and called for every variable, and inlined into each call,
/// so the step runs the same code as with a copy per variable shape. Nothing at -O0.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__OPTIMIZE__)
#define HOOKFUSE_FLATTEN __attribute__((flatten))
#else
#define HOOKFUSE_FLATTEN
#endif

#ifndef HOOKFUSE_HOST_FLOAT
#ifdef HOOKFUSE_EMBEDDED
#define HOOKFUSE_HOST_FLOAT float
#else
#define HOOKFUSE_HOST_FLOAT double
#endif
#endif

namespace hookfuse {

/// The floating-point type of the numbers hookfuse computes outside the model: a fetched
/// value read with TensorValue::at / item(), a clock's seconds, a timer's interval, an
/// optimizer's learning rate, a number in a log line. double (like TensorFlow's Python floats)
/// in hosted builds; float under HOOKFUSE_EMBEDDED, where a Cortex-M4F or RV32F has a
/// single-precision FPU only and double arithmetic is software (several KB of flash). Set with
/// -DHOOKFUSE_HOST_FLOAT=double. The model's own scalar type (Placeholder, Variable) is
/// independent of it.
using host_float = HOOKFUSE_HOST_FLOAT;

#ifdef HOOKFUSE_NO_EXCEPTIONS
/// Called for every error in a build without exceptions. The user defines it (for example to
/// print over a UART and halt). It must not return.
[[noreturn]] void error_handler(std::string_view what);
#endif

namespace detail {

/// What error_handler receives for every error under HOOKFUSE_STRIP_ERROR_STRINGS.
inline constexpr std::string_view kStrippedErrorText =
    "hookfuse: error (message stripped: HOOKFUSE_STRIP_ERROR_STRINGS)";

/// Reports an error: throws `Error(message)` in hosted builds, calls `error_handler` otherwise
/// (with kStrippedErrorText in place of `message` under HOOKFUSE_STRIP_ERROR_STRINGS).
template <class Error, class Message>
[[noreturn]] inline void fail(Message&& message) {
#if defined(HOOKFUSE_STRIP_ERROR_STRINGS)
  (void)message;
  ::hookfuse::error_handler(kStrippedErrorText);
#elif defined(HOOKFUSE_NO_EXCEPTIONS)
  ::hookfuse::error_handler(std::string_view(message));
#else
  throw Error(std::forward<Message>(message));
#endif
}

}  // namespace detail
}  // namespace hookfuse
