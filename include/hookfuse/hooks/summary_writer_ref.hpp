// hookfuse/hooks/summary_writer_ref.hpp: SummaryWriterRef, how a hook names the event file it
// writes to (the `output_dir` / `summary_writer` arguments of TensorFlow's hooks).
//
// The hooks are core headers and know nothing of files: this names io::SummaryWriter only by a
// forward declaration. A SummaryWriterRef is made where io/summary_writer.hpp (for a writer) or
// io/summary_writer_cache.hpp (for a directory) is included, and it carries what the hook needs.
// Not available in HOOKFUSE_EMBEDDED builds (no files there).
#pragma once

#include "hookfuse/config.hpp"

#ifndef HOOKFUSE_EMBEDDED

#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

namespace hookfuse {

namespace io {
template <class>
class BasicSummaryWriter;  // hookfuse/io/summary_writer.hpp
using SummaryWriter = BasicSummaryWriter<void>;
template <class>
class BasicSummaryWriterCache;  // hookfuse/io/summary_writer_cache.hpp
using SummaryWriterCache = BasicSummaryWriterCache<void>;
}  // namespace io

namespace detail {
/// `U`, named through a template parameter so that using it waits for instantiation.
template <class T, class U>
struct dependent {
  using type = U;
};
}  // namespace detail

/// A shared reference to an io::SummaryWriter, or none (the default). Made from
///  - `std::shared_ptr<io::SummaryWriter>` (io::create_file_writer, io::SummaryWriterCache::get):
///    TF's `summary_writer=`;
///  - a directory (a string, `const char*`, std::string_view or std::filesystem::path): the
///    writer `io::SummaryWriterCache::get(dir)` returns, obtained at once (TF's `output_dir=`;
///    TF obtains it in the hook's begin(): either way every hook writing into a directory shares
///    its one file). Needs io/summary_writer_cache.hpp included; throws as the cache does
///    (io::IoError, ValueError for an empty directory).
/// Copies share the writer, so copying a hook never opens a second file.
class SummaryWriterRef {
 public:
  SummaryWriterRef() noexcept = default;

  template <class W>
    requires std::is_same_v<W, io::SummaryWriter>
  SummaryWriterRef(std::shared_ptr<W> writer) noexcept  // NOLINT(google-explicit-constructor)
      : writer_(std::move(writer)), add_scalar_(writer_ ? &add_scalar_to<W> : nullptr) {}

  template <class Dir>
    requires(std::is_convertible_v<const Dir&, std::string_view> ||
             requires(const Dir& d) { d.string(); })
  SummaryWriterRef(const Dir& output_dir)  // NOLINT(google-explicit-constructor)
      : SummaryWriterRef(open(output_dir)) {}

  explicit operator bool() const noexcept { return writer_ != nullptr; }
  /// The writer (nullptr for none); a complete type where io/summary_writer.hpp is included.
  [[nodiscard]] io::SummaryWriter* get() const noexcept { return writer_.get(); }
  [[nodiscard]] const std::shared_ptr<io::SummaryWriter>& shared() const noexcept {
    return writer_;
  }

  /// writer->add_scalar(tag, value, step): a scalar in the writer's ScalarForm, stamped with its
  /// clock. Does nothing without a writer.
  void add_scalar(std::string_view tag, double value, std::int64_t step) const {
    if (add_scalar_ != nullptr) add_scalar_(*writer_, tag, value, step);
  }

 private:
  template <class W>
  static void add_scalar_to(W& writer, std::string_view tag, double value, std::int64_t step) {
    writer.add_scalar(tag, value, step);
  }
  template <class Dir>
  static std::shared_ptr<io::SummaryWriter> open(const Dir& output_dir) {
    using Cache = typename detail::dependent<Dir, io::SummaryWriterCache>::type;
    static_assert(
        requires { sizeof(Cache); },
        "hookfuse: a hook's output_dir needs #include <hookfuse/io/summary_writer_cache.hpp>");
    if constexpr (std::is_convertible_v<const Dir&, std::string_view>)
      return Cache::get(std::string_view(output_dir));
    else
      return Cache::get(output_dir.string());
  }

  std::shared_ptr<io::SummaryWriter> writer_;
  void (*add_scalar_)(io::SummaryWriter&, std::string_view, double, std::int64_t) = nullptr;
};

}  // namespace hookfuse

#endif  // HOOKFUSE_EMBEDDED
