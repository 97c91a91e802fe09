// fuzz/fuzz_safetensors.cpp: the input is a .safetensors file (8-byte header length, JSON
// header, tensor bytes). Opens it with io::safetensors::SafetensorsFile::open (header length, JSON, schema,
// dtypes, shapes, offsets covering the data exactly) and reads every tensor's bytes.
// Documented errors: io::DataLossError, io::NotFoundError, io::IoError, hookfuse::ValueError.
#include <cstddef>
#include <cstdint>
#include <hookfuse/io/safetensors.hpp>
#include <vector>

#include "fuzz_util.hpp"

namespace io = hookfuse::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = hookfuse_fuzz::work_dir() / "model.safetensors";
  hookfuse_fuzz::write_file(path, data, size);
  try {
    const io::safetensors::SafetensorsFile file = io::safetensors::SafetensorsFile::open(path);
    for (const auto& t : file.tensors()) {
      std::vector<std::byte> bytes(static_cast<std::size_t>(t.num_bytes()));
      file.read_bytes(t.name, bytes);
    }
    (void)file.keys();
  } catch (const io::DataLossError&) {
  } catch (const io::NotFoundError&) {
  } catch (const io::IoError&) {
  } catch (const hookfuse::ValueError&) {
  }
  return 0;
}
