// hookfuse/detail/call_all.hpp: calls that must all happen although one of them fails (every
// hook's end(), every checkpoint listener's end()). The first error is kept and raised after
// the last call; each later one goes to a log function, so that no error is lost and none
// stops the calls after it.
//
// Without exceptions (HOOKFUSE_NO_EXCEPTIONS) an error calls hookfuse::error_handler, which
// does not return: the calls are then a plain fold, with nothing stored and nothing allocated.
#pragma once

#include <boost/hana/for_each.hpp>
#include <type_traits>
#include <utility>

#include "hookfuse/config.hpp"

#ifndef HOOKFUSE_NO_EXCEPTIONS
#include <exception>
#endif

namespace hookfuse::detail {

/// Runs calls one after the other (run(f)), none skipped because an earlier one threw. With
/// `keep_first` the first exception is kept for rethrow_first() and every later one is passed to
/// `log(what)`; without it every exception is passed to `log(what)` (a destructor, which has no
/// caller to raise to). `what` is the exception's what(), or a fixed text for one not derived
/// from std::exception; it is valid during the call only.
template <class Log>
class ErrorCollector {
 public:
  explicit ErrorCollector(Log log, bool keep_first = true)
      : log_(std::move(log)), keep_first_(keep_first) {}

  /// Calls f(); an exception from it is kept or logged (see the class comment), not raised.
  template <class F>
  void run(F&& f) {
#ifdef HOOKFUSE_NO_EXCEPTIONS
    std::forward<F>(f)();
#else
    try {
      std::forward<F>(f)();
    } catch (const std::exception& e) {
      record(e.what());
    } catch (...) {
      record("an exception not derived from std::exception");
    }
#endif
  }

  /// Raises the first exception kept, if any (once).
  void rethrow_first() {
#ifndef HOOKFUSE_NO_EXCEPTIONS
    if (first_) std::rethrow_exception(std::exchange(first_, nullptr));
#endif
  }

  /// Whether an exception was kept for rethrow_first().
  bool failed() const {
#ifdef HOOKFUSE_NO_EXCEPTIONS
    return false;
#else
    return static_cast<bool>(first_);
#endif
  }

 private:
#ifndef HOOKFUSE_NO_EXCEPTIONS
  /// Inside a handler: keeps the exception being handled, or logs `what`.
  void record(const char* what) {
    if (keep_first_ && !first_) first_ = std::current_exception();
    else log_(what);
  }
  std::exception_ptr first_;
#endif
  Log log_;
  bool keep_first_;
};

/// f(element) for every element of the hana tuple `elements`, in order, through `errors`: an
/// element whose call throws does not stop the calls on the ones after it.
template <class Tuple, class F, class Log>
void call_all(Tuple& elements, F&& f, ErrorCollector<Log>& errors) {
  boost::hana::for_each(elements, [&](auto& element) { errors.run([&] { f(element); }); });
}

/// f(element) for every element of the hana tuple `elements`, in order, even when one throws;
/// then the first exception is raised again, each later one having been passed to `log(what)`.
template <class Tuple, class F, class Log>
void call_all(Tuple& elements, F&& f, Log&& log) {
  ErrorCollector<std::remove_cvref_t<Log>> errors(std::forward<Log>(log));
  call_all(elements, std::forward<F>(f), errors);
  errors.rethrow_first();
}

}  // namespace hookfuse::detail
