// hookfuse/io/tensor_bundle.hpp: TensorFlow V2 checkpoints (tensor bundles), read and written:
// BundleWriter, BundleReader, merge_bundles, CheckpointReader / load_checkpoint /
// list_variables (TensorFlow's tensorflow/core/util/tensor_bundle). docs/checkpoints.md
// describes the files.
#pragma once

#include "hookfuse/io/bundle_entry.hpp"
#include "hookfuse/io/bundle_merge.hpp"
#include "hookfuse/io/bundle_paths.hpp"
#include "hookfuse/io/bundle_reader.hpp"
#include "hookfuse/io/bundle_writer.hpp"
#include "hookfuse/io/checkpoint_reader.hpp"
#include "hookfuse/io/data_type.hpp"
#include "hookfuse/io/tensor_shape.hpp"
