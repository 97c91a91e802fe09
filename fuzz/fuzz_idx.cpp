// fuzz/fuzz_idx.cpp: the input is an uncompressed IDX file. Reads it with
// data::read_idx_images (IDX3 unsigned bytes) and data::read_idx_labels (IDX1): magic, header,
// declared sizes against the bytes present.
// Documented error: data::DataError.
#include <cstddef>
#include <cstdint>
#include <hookfuse/data/idx.hpp>

#include "fuzz_util.hpp"

namespace data = hookfuse::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const auto path = hookfuse_fuzz::work_dir() / "fuzz-idx-ubyte";
  hookfuse_fuzz::write_file(path, bytes, size);
  try {
    (void)data::read_idx_images(path);
  } catch (const data::DataError&) {
  }
  try {
    (void)data::read_idx_labels(path);
  } catch (const data::DataError&) {
  }
  return 0;
}
