// bench/checkpoint.cpp: what checkpoints cost (issue 9).
//
//  - io::Saver::save of the Fashion-MNIST model (784 -> 256 -> 10: 203,530 floats in four
//    variables, plus global_step) into a scratch directory, and Saver::restore of it; the bare
//    BundleWriter (add + finish) and BundleReader (open + lookup of every tensor) underneath.
//    Argument 0: a directory under /tmp (the disk: every fsync waits for it); 1: under /dev/shm
//    (tmpfs: fsync returns at once), so the difference is what durability costs. The library has
//    no switch for fsync and gets none for a benchmark.
//  - The batch-32 training step with the example's four hooks, with and without a
//    CheckpointSaverHook that does not fire in the timed steps (save_steps = 2^40).
//
// Run alternately: --benchmark_enable_random_interleaving=true --benchmark_repetitions=N.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <hookfuse/io/bundle_reader.hpp>
#include <hookfuse/io/bundle_writer.hpp>
#include <hookfuse/io/crc32c.hpp>
#include <span>
#include <string>
#include <vector>

#include "hook_session.hpp"

namespace hf = hookfuse;
using namespace hookfuse_bench;

namespace {

std::filesystem::path scratch_root(benchmark::State& state) {
  return state.range(0) == 0 ? std::filesystem::path("/tmp") : std::filesystem::path("/dev/shm");
}

void set_label(benchmark::State& state) {
  state.SetLabel(state.range(0) == 0 ? "disk (/tmp, ext4)" : "tmpfs (/dev/shm)");
}

// Checkpoint size: the four variables' floats and global_step's int64.
constexpr std::int64_t kCheckpointBytes =
    4 * (std::int64_t{kIn} * kHidden + kHidden + std::int64_t{kHidden} * kOut + kOut) + 8;

// Saver::save at a new global step each iteration (a save of a prefix that already holds the
// same values is skipped by design), with TensorFlow's default retention (max_to_keep = 5): from
// the sixth save on, each also deletes the oldest checkpoint and rewrites the state file.
void BM_saver_save(benchmark::State& state) {
  set_label(state);
  const ScratchDir dir(scratch_root(state));
  const std::string save_path = (dir.path() / "model.ckpt").string();
  with_hookfuse_session(RandomBatch(32), 0.01, [&](auto& session) {
    const auto vars = session.variables();
    hf::io::Saver saver;
    std::int64_t step = 0;
    for (auto _ : state) benchmark::DoNotOptimize(saver.save(vars, save_path, ++step));
  });
  state.SetBytesProcessed(state.iterations() * kCheckpointBytes);
}

// Saver::restore of one checkpoint into the session's variables (its files in the page cache).
void BM_saver_restore(benchmark::State& state) {
  set_label(state);
  const ScratchDir dir(scratch_root(state));
  with_hookfuse_session(RandomBatch(32), 0.01, [&](auto& session) {
    const auto vars = session.variables();
    hf::io::Saver saver;
    const std::string prefix = saver.save(vars, (dir.path() / "model.ckpt").string(), 0);
    for (auto _ : state) {
      saver.restore(vars, prefix);
      benchmark::ClobberMemory();
    }
  });
  state.SetBytesProcessed(state.iterations() * kCheckpointBytes);
}

// The same tensors through the bare BundleWriter: data file, index, fsyncs and renames; no
// variable list, state file or retention.
void BM_bundle_writer(benchmark::State& state) {
  set_label(state);
  const ScratchDir dir(scratch_root(state));
  const InitialWeights w;
  std::int64_t step = 0;
  for (auto _ : state) {
    hf::io::BundleWriter writer(dir.path() / ("bundle-" + std::to_string(step)));
    writer.add("dense/kernel", {kIn, kHidden}, std::span<const float>(w.w1.data(), w.w1.size()));
    writer.add("dense/bias", {kHidden}, std::span<const float>(w.b1.data(), w.b1.size()));
    writer.add("logits/kernel", {kHidden, kOut}, std::span<const float>(w.w2.data(), w.w2.size()));
    writer.add("logits/bias", {kOut}, std::span<const float>(w.b2.data(), w.b2.size()));
    writer.add("global_step", {}, std::array<std::int64_t, 1>{step});
    writer.finish();
    state.PauseTiming();  // keep the directory small, as retention would
    std::filesystem::remove(dir.path() / ("bundle-" + std::to_string(step) + ".index"));
    std::filesystem::remove(dir.path() /
                            ("bundle-" + std::to_string(step) + ".data-00000-of-00001"));
    state.ResumeTiming();
    ++step;
  }
  state.SetBytesProcessed(state.iterations() * kCheckpointBytes);
}

// BundleReader: open (read and check the index) and look up every tensor (positioned reads and
// CRC32C of 814 KB) into preallocated buffers.
void BM_bundle_reader(benchmark::State& state) {
  set_label(state);
  const ScratchDir dir(scratch_root(state));
  const InitialWeights w;
  const auto prefix = dir.path() / "bundle";
  {
    hf::io::BundleWriter writer(prefix);
    writer.add("dense/kernel", {kIn, kHidden}, std::span<const float>(w.w1.data(), w.w1.size()));
    writer.add("dense/bias", {kHidden}, std::span<const float>(w.b1.data(), w.b1.size()));
    writer.add("logits/kernel", {kHidden, kOut}, std::span<const float>(w.w2.data(), w.w2.size()));
    writer.add("logits/bias", {kOut}, std::span<const float>(w.b2.data(), w.b2.size()));
    writer.add("global_step", {}, std::array<std::int64_t, 1>{0});
    writer.finish();
  }
  std::vector<float> w1(w.w1.size()), b1(kHidden), w2(w.w2.size()), b2(kOut);
  std::array<std::int64_t, 1> gs{};
  for (auto _ : state) {
    const hf::io::BundleReader reader(prefix);
    reader.lookup<float>("dense/kernel", w1);
    reader.lookup<float>("dense/bias", b1);
    reader.lookup<float>("logits/kernel", w2);
    reader.lookup<float>("logits/bias", b2);
    reader.lookup<std::int64_t>("global_step", gs);
    benchmark::DoNotOptimize(w1.data());
  }
  state.SetBytesProcessed(state.iterations() * kCheckpointBytes);
}

// CRC32C (io::crc32c) of the checkpoint's 814,128 bytes: computed once per tensor when saving
// (the entry's checksum) and again when restoring (checked on every lookup).
void BM_crc32c(benchmark::State& state) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(kCheckpointBytes));
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 131);
  for (auto _ : state) benchmark::DoNotOptimize(hf::io::crc32c(bytes.data(), bytes.size()));
  state.SetBytesProcessed(state.iterations() * kCheckpointBytes);
}

// The batch-32 step, the example's four hooks, plus hook E. One run before timing (it is the
// session's first: hooks that write at a session's start do so there).
template <Extra E>
void BM_step(benchmark::State& state) {
  const ScratchDir dir("/tmp");
  with_extra_hook_session<E>(RandomBatch(32), dir.path().string(), [&](auto& session) {
    session.run();
    for (auto _ : state) session.run();
  });
  state.SetLabel(extra_name(E));
}

}  // namespace

BENCHMARK(BM_saver_save)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_saver_restore)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_bundle_writer)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_bundle_reader)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_crc32c)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_step, Extra::none)
    ->Name("BM_step_b32/four_hooks")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_step, Extra::checkpoint_saver)
    ->Name("BM_step_b32/plus_checkpoint_saver_not_firing")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

BENCHMARK_MAIN();
