// bench/allreduce.cpp: the time of one MPI_Allreduce(MPI_IN_PLACE, MPI_SUM) of float buffers,
// the call distributed::AverageGradientsHook makes once per step, for the Fashion-MNIST MLP's
// 203,530 floats (814,120 bytes) and for 1 KiB ... 8 MiB, so that the latency and bandwidth of
// the transport can be fitted and the scaling model (docs/distributed.md, "Scaling model";
// bench/scaling_model.py) checked against a measurement. Not a Google Benchmark binary: MPI
// needs every rank in the same call, so the timing loop is written out.
//
//   mpirun --allow-run-as-root --oversubscribe -np 2 ./build/bench/allreduce [rounds] [warmup]
//
// `warmup` untimed rounds, then `rounds` timed ones (defaults 400 and 50), each round one call of
// every size in turn. Every call starts after an MPI_Barrier; a call's time is the
// largest over the ranks of MPI_Wtime after minus before, so a rank that arrives late does not
// hide the cost. Printed on rank 0, in microseconds: the median, the 10th and 90th percentile
// and the minimum of the calls, and the bus bandwidth 2(N-1)/N * bytes / median (the bytes a
// ring allreduce moves per rank). Then the line t = alpha + beta * bytes fitted (least squares
// in relative error) to the medians of every size except the model's, read as the ring model
// t = 2(N-1) * latency + 2(N-1)/N * bytes / bandwidth, and that line's prediction for the
// model's 814,120 bytes against its median; the same for the minima (the calls no other process
// interrupted, what an idle machine approaches).
//
// Errors: a non-numeric or non-positive `rounds` / `warmup` argument, or an MPI call that fails,
// ends every rank with a message on stderr and exit status 1.
#include <mpi.h>  // the C API only: hookfuse::mpi defines OMPI_SKIP_MPICXX, MPICH_SKIP_MPICXX

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kModelFloats = 203530;  // 784*256 + 256 + 256*10 + 10 (bench/mlp.hpp)

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  std::fprintf(stderr, "allreduce: %s failed: %s (error code %d)\n", call, text, code);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int parse_count(const char* text, const char* what) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0 || value > 1000000) {
    std::fprintf(stderr, "allreduce: %s must be an integer in [1, 1000000], got '%s'\n", what,
                 text);
    return -1;
  }
  return static_cast<int>(value);
}

double percentile(std::vector<double> sorted, double q) {
  const auto index = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

struct Row {
  std::size_t bytes;
  double median_us;
  double min_us;
};

struct Line {
  double alpha_us;  // microseconds
  double beta_us_per_byte;
  double at(std::size_t bytes) const {
    return alpha_us + beta_us_per_byte * static_cast<double>(bytes);
  }
};

// Least squares t = alpha + beta * bytes in relative error (weights 1 / t^2): the small sizes fix
// the latency, the large ones the bandwidth, and no size outweighs the others by its magnitude.
Line fit(const std::vector<Row>& rows, double Row::*time) {
  double sw = 0, swx = 0, swy = 0, swxx = 0, swxy = 0;
  for (const Row& r : rows) {
    const double t = r.*time, w = 1.0 / (t * t), x = static_cast<double>(r.bytes);
    sw += w;
    swx += w * x;
    swy += w * t;
    swxx += w * x * x;
    swxy += w * x * t;
  }
  const double beta = (sw * swxy - swx * swy) / (sw * swxx - swx * swx);
  return {(swy - beta * swx) / sw, beta};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  const int reps = argc > 1 ? parse_count(argv[1], "rounds (first argument)") : 400;
  const int warmup = argc > 2 ? parse_count(argv[2], "warmup (second argument)") : 50;
  if (reps < 0 || warmup < 0) {
    MPI_Finalize();
    return 1;
  }

  // 1 KiB ... 8 MiB in powers of 4 and 2, and the model's 814,120 bytes.
  std::vector<std::size_t> floats = {256,          1024,   4096,   16384,   65536,  131072,
                                     kModelFloats, 262144, 524288, 1048576, 2097152};
  std::vector<float> buffer(floats.back(), 1.0f);
  const double ring = 2.0 * (ranks - 1) / ranks;

  if (rank == 0) {
    std::printf("MPI_Allreduce(MPI_IN_PLACE, MPI_FLOAT, MPI_SUM), %d ranks; microseconds\n\n",
                ranks);
    std::printf("| bytes | floats | calls | median | p10 | p90 | min | bus GB/s |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
  }
  // Rounds, each one call of every size in turn, so that the load of a shared machine falls on
  // every size alike instead of on whichever size was running when it came.
  const std::size_t sizes = floats.size();
  std::vector<std::vector<double>> local(sizes,
                                         std::vector<double>(static_cast<std::size_t>(reps)));
  for (int round = -warmup; round < reps; ++round) {
    for (std::size_t s = 0; s < sizes; ++s) {
      const std::size_t n = floats[s];
      // Values stay exact: every element is 1 before a call and `ranks` after it.
      std::fill_n(buffer.begin(), n, 1.0f);
      check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      const double start = MPI_Wtime();
      check(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
      const double elapsed = MPI_Wtime() - start;
      if (buffer[0] != static_cast<float>(ranks) || buffer[n - 1] != static_cast<float>(ranks)) {
        std::fprintf(stderr, "allreduce: rank %d: the sum of %zu floats is wrong\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      if (round >= 0) local[s][static_cast<std::size_t>(round)] = elapsed;
    }
  }

  std::vector<Row> rows;
  double model_median = 0.0, model_min = 0.0;
  for (std::size_t s = 0; s < sizes; ++s) {
    const std::size_t n = floats[s];
    std::vector<double> slowest(local[s].size());
    check(MPI_Reduce(local[s].data(), slowest.data(), reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD),
          "MPI_Reduce");
    if (rank != 0) continue;
    for (double& t : slowest) t *= 1e6;
    std::sort(slowest.begin(), slowest.end());
    const double median = percentile(slowest, 0.5);
    const std::size_t bytes = n * sizeof(float);
    std::printf("| %zu%s | %zu | %d | %.1f | %.1f | %.1f | %.1f | %.2f |\n", bytes,
                n == kModelFloats ? " (model)" : "", n, reps, median, percentile(slowest, 0.1),
                percentile(slowest, 0.9), slowest.front(),
                ring * static_cast<double>(bytes) / (median * 1e-6) / 1e9);
    if (n == kModelFloats) {
      model_median = median;
      model_min = slowest.front();
    } else {
      rows.push_back({bytes, median, slowest.front()});
    }
  }

  if (rank == 0 && ranks > 1) {
    const std::size_t model_bytes = kModelFloats * sizeof(float);
    const auto report = [&](const char* what, double Row::*time, double model_measured) {
      const Line line = fit(rows, time);
      std::printf("\n%s, fitted over the other sizes: t = %.2f us + bytes / %.3f GB/s\n", what,
                  line.alpha_us, 1e-3 / line.beta_us_per_byte);
      for (const Row& r : rows)
        std::printf("  %zu bytes: measured %.1f us, fit %.1f us\n", r.bytes, r.*time,
                    line.at(r.bytes));
      const double latency_us = line.alpha_us / (2.0 * (ranks - 1));
      const double bandwidth_gbit = ring / (line.beta_us_per_byte * 1e-6) * 8.0 / 1e9;
      std::printf(
          "  ring model: latency %.2f us, bandwidth %.2f Gbit/s "
          "(bench/scaling_model.py --network shm:%.2f:%.2f)\n",
          latency_us, bandwidth_gbit, bandwidth_gbit, latency_us);
      std::printf(
          "  model, %zu bytes: measured %.1f us, predicted %.1f us (measured/predicted "
          "%.2f)\n",
          model_bytes, model_measured, line.at(model_bytes), model_measured / line.at(model_bytes));
    };
    report("medians", &Row::median_us, model_median);
    report("minima", &Row::min_us, model_min);
  }
  MPI_Finalize();
  return 0;
}
