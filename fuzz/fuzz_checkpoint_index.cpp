// fuzz/fuzz_checkpoint_index.cpp: the input is a checkpoint's "P.index" (a LevelDB table of
// BundleEntryProto values), beside a fixed 256-byte data file "P.data-00000-of-00001". Opens it
// with io::BundleReader (footer, block handles, block CRCs, snappy blocks, header and entries),
// then reads every entry's bytes (offsets checked against the data file, CRCs, string tensors).
// Documented errors: io::DataLossError, io::NotFoundError, io::IoError, hookfuse::ValueError.
#include <cstddef>
#include <cstdint>
#include <hookfuse/io/tensor_bundle.hpp>
#include <string>

#include "fuzz_util.hpp"

namespace io = hookfuse::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto prefix = hookfuse_fuzz::work_dir() / "model.ckpt";
  static const bool data_written = [&] {
    std::string bytes(256, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i);
    hookfuse_fuzz::write_file(io::data_filename(prefix), bytes);
    return true;
  }();
  (void)data_written;
  hookfuse_fuzz::write_file(io::meta_filename(prefix), data, size);
  try {
    const io::BundleReader reader(prefix);
    for (const io::BundleEntry& e : reader.entries()) {
      try {
        (void)reader.lookup_bytes(e.key);
        if (e.dtype == io::DataType::DT_STRING) (void)reader.lookup_strings(e.key);
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
