// CRC32C and TensorFlow's masking, against the reference values in fixtures/FORMATS.md §1
// (computed there with Google's crc32c and TensorFlow's tsl::crc32c).
#include <hookfuse/io/crc32c.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <cstring>

using hookfuse::io::crc32c;
using hookfuse::io::mask_crc;
using hookfuse::io::unmask_crc;

TEST_CASE("crc32c matches the published check values") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);
  CHECK(crc32c("abcd", 4) == 0x92C80A31u);
  CHECK(crc32c("", 0) == 0u);
  std::array<unsigned char, 32> b{};
  CHECK(crc32c(b.data(), b.size()) == 0x8A9136AAu);
  b.fill(0xFF);
  CHECK(crc32c(b.data(), b.size()) == 0x62A8AB43u);
  for (unsigned i = 0; i < 32; ++i) b[i] = static_cast<unsigned char>(i);
  CHECK(crc32c(b.data(), b.size()) == 0x46DD794Eu);
  for (unsigned i = 0; i < 32; ++i) b[i] = static_cast<unsigned char>(31 - i);
  CHECK(crc32c(b.data(), b.size()) == 0x113FDB5Cu);
}

TEST_CASE("running crc32c over pieces equals one pass") {
  hookfuse::io::Crc32c c;
  c.update("1234", 4);
  c.update("56789", 5);
  CHECK(c.value() == 0xE3069283u);
}

TEST_CASE("masking as TensorFlow stores CRCs") {
  CHECK(mask_crc(0) == 0xa282ead8u);
  // Every TFRecord file starts with the 8-byte LE length 24 and its masked CRC 0x224b7fa3.
  const std::array<unsigned char, 8> len24{24, 0, 0, 0, 0, 0, 0, 0};
  CHECK(hookfuse::io::masked_crc32c(len24.data(), len24.size()) == 0x224b7fa3u);
  for (std::uint32_t v : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u})
    CHECK(unmask_crc(mask_crc(v)) == v);
  // The half_plus_three checkpoint's masked CRCs of float 0.5 and 3.0 (fixtures/tf/README.md).
  float half = 0.5f, three = 3.0f;
  CHECK(hookfuse::io::masked_crc32c(&half, 4) == 0x1f273806u);
  CHECK(hookfuse::io::masked_crc32c(&three, 4) == 0xc382d6efu);
}
