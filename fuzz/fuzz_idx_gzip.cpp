// fuzz/fuzz_idx_gzip.cpp: gzip-compressed IDX files. The first input byte picks the mode:
// odd, the rest is the .gz file as stored (corrupt streams, trailing members, bad CRCs and
// lengths for the inflater); even, the rest is an IDX file that the target gzips first (the
// header logic behind the inflater: the declared size bounds how far it inflates). Reads the
// file with data::read_idx_images and data::read_idx_labels.
// Documented error: data::DataError.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <hookfuse/data/idx.hpp>
#include <vector>

#include "fuzz_util.hpp"

namespace data = hookfuse::data;

namespace {

std::vector<std::uint8_t> gzip(const std::uint8_t* in, std::size_t size) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    std::abort();
  std::vector<std::uint8_t> out(deflateBound(&zs, static_cast<uLong>(size)) + 32);
  zs.next_in = const_cast<Bytef*>(in);
  zs.avail_in = static_cast<uInt>(size);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size < 1) return 0;
  const auto path = hookfuse_fuzz::work_dir() / "fuzz-idx-ubyte.gz";
  if ((bytes[0] & 1) != 0) {
    hookfuse_fuzz::write_file(path, bytes + 1, size - 1);
  } else {
    const std::vector<std::uint8_t> gz = gzip(bytes + 1, size - 1);
    hookfuse_fuzz::write_file(path, gz.data(), gz.size());
  }
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
