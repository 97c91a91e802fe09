// hookfuse/io/safetensors.hpp: reading and writing safetensors files (huggingface/safetensors),
// the tensor format Python tools (safetensors.numpy / .torch, transformers) open directly.
//
// Layout: u64 little-endian N, then N bytes of JSON header, then the data area. The header maps
// each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (byte offsets into the
// data area, end exclusive) and may hold "__metadata__", a string-to-string map. Data is
// little-endian, row-major (C order), without strides; shape [] is a scalar (1 element), a zero
// dimension holds no bytes.
//
// The writer reproduces the reference writer (`safetensors::serialize`, Python
// `safetensors.numpy.save_file`) byte for byte: compact JSON, `__metadata__` first (keys sorted;
// the reference leaves their order to a hash map), tensors sorted by dtype, largest alignment
// first, then by name, the header padded with spaces to a multiple of 8 so the data starts
// 8-byte aligned. The reader validates the file as the reference reader does before anything is
// used. Little-endian hosts only.
//
//     namespace st = hookfuse::io::safetensors;
//     std::vector<float> w(784 * 256);  std::int64_t step = 100;
//     st::save_file("model.safetensors",
//                   {st::tensor_ref("dense/kernel", {784, 256}, w),
//                    st::tensor_ref("global_step", {}, std::span(&step, 1))},
//                   {{"format", "np"}});
//     auto f = st::SafetensorsFile::open("model.safetensors");
//     std::vector<float> kernel = f.get_tensor<float>("dense/kernel");
#pragma once

#include "hookfuse/io/safetensors_dtype.hpp"   // Dtype, Element, dtype_of, Metadata
#include "hookfuse/io/safetensors_reader.hpp"  // SafetensorsFile, TensorInfo
#include "hookfuse/io/safetensors_writer.hpp"  // TensorRef, tensor_ref, serialize, save_file
