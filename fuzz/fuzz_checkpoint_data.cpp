// fuzz/fuzz_checkpoint_data.cpp: a whole checkpoint, index and data file, in one input:
//
//   uint32 LE  N (the index's byte count, taken modulo the input's remaining size + 1)
//   byte[N]    "P.index"
//   byte[...]  "P.data-00000-of-00001" (the rest)
//
// scripts/fuzz.sh makes the seeds from the fixture checkpoints in this layout. Opens the
// checkpoint with io::load_checkpoint and reads every tensor as its dtype (get_tensor for the
// numeric dtypes, lookup_strings for DT_STRING, lookup_bytes for any), so the entries' offsets,
// sizes and CRCs meet data files of any length and content.
// Documented errors: io::DataLossError, io::NotFoundError, io::IoError, hookfuse::ValueError.
#include <cstddef>
#include <cstdint>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <hookfuse/io/tensor_bundle.hpp>
#include <string>

#include "fuzz_util.hpp"

namespace io = hookfuse::io;

namespace {

template <class T>
void read_as(const io::CheckpointReader& reader, const std::string& key) {
  (void)reader.get_tensor<T>(key);
}

void read_entry(const io::CheckpointReader& reader, const io::BundleEntry& e) {
  switch (e.dtype) {
    case io::DataType::DT_FLOAT: read_as<float>(reader, e.key); break;
    case io::DataType::DT_DOUBLE: read_as<double>(reader, e.key); break;
    case io::DataType::DT_INT32: read_as<std::int32_t>(reader, e.key); break;
    case io::DataType::DT_INT64: read_as<std::int64_t>(reader, e.key); break;
    case io::DataType::DT_STRING: (void)reader.bundle().lookup_strings(e.key); break;
    default: break;
  }
  (void)reader.bundle().lookup_bytes(e.key);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::size_t rest = size - 4;
  const std::size_t n = hookfuse_fuzz::le32(data) % (rest + 1);
  const auto prefix = hookfuse_fuzz::work_dir() / "model.ckpt";
  hookfuse_fuzz::write_file(io::meta_filename(prefix), data + 4, n);
  hookfuse_fuzz::write_file(io::data_filename(prefix), data + 4 + n, rest - n);
  try {
    const io::CheckpointReader reader = io::load_checkpoint(prefix);
    for (const io::BundleEntry& e : reader.bundle().entries()) {
      try {
        read_entry(reader, e);
      } catch (const io::DataLossError&) {
      } catch (const io::NotFoundError&) {
      } catch (const hookfuse::ValueError&) {
      }
    }
  } catch (const io::DataLossError&) {
  } catch (const io::NotFoundError&) {
  } catch (const io::IoError&) {
  } catch (const hookfuse::ValueError&) {
  }
  return 0;
}
