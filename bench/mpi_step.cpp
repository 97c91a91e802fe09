// bench/mpi_step.cpp: the Fashion-MNIST step (bench/mlp.hpp, the four hooks of bench/step.cpp,
// SGD) at a global batch split over the ranks, with distributed::AverageGradientsHook averaging
// the gradients every step (or AverageVariablesHook the updated weights, the update then fused),
// on T threads per rank: the data-parallel step the scaling model of docs/distributed.md
// predicts. A plain MPI program (every rank must be in the same step), built where MPI is found:
//
//   mpirun --allow-run-as-root --oversubscribe -np N ./build/bench/mpi_step [batch] [threads]
//          [gradients|variables]
//
// batch: the global batch (default 128; a multiple of N), threads: per rank (default 1), the
// third argument what the ranks average (default gradients). Runs 50
// untimed steps, then 7 rounds of 100 timed steps, each round after an MPI_Barrier; a round's
// time is the largest over the ranks. Prints on rank 0 the median, minimum and maximum step time
// of the rounds in microseconds. Errors: a bad argument ends every rank with a message and exit
// status 1.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <hookfuse/distributed/average_gradients_hook.hpp>
#include <hookfuse/distributed/average_variables_hook.hpp>
#include <hookfuse/distributed/communicator.hpp>
#include <hookfuse/hookfuse.hpp>
#include <vector>

#include "mlp.hpp"

namespace hf = hookfuse;
namespace hd = hookfuse::distributed;
using namespace hookfuse_bench;

namespace {

constexpr int kWarmup = 50, kRounds = 7, kSteps = 100;

long parse(const char* text, const char* what, long max) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0 || value > max) {
    std::fprintf(stderr, "mpi_step: %s must be an integer in [1, %ld], got '%s'\n", what, max,
                 text);
    return -1;
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const hd::MpiEnvironment mpi(argc, argv);
  const hd::Communicator comm;
  const long batch = argc > 1 ? parse(argv[1], "batch", 1 << 16) : 128;
  const long threads = argc > 2 ? parse(argv[2], "threads", 256) : 1;
  const char* average = argc > 3 ? argv[3] : "gradients";
  const bool variables = std::strcmp(average, "variables") == 0;
  if (!variables && std::strcmp(average, "gradients") != 0) {
    if (comm.rank() == 0)
      std::fprintf(stderr,
                   "mpi_step: the third argument must be gradients or variables, got '%s'\n",
                   average);
    return 1;
  }
  if (batch < 0 || threads < 0 || batch % comm.size() != 0) {
    if (batch > 0 && batch % comm.size() != 0 && comm.rank() == 0)
      std::fprintf(stderr, "mpi_step: batch %ld is not a multiple of the %d ranks\n", batch,
                   comm.size());
    return 1;
  }
  hf::set_intra_op_parallelism_threads(static_cast<int>(threads));
  std::vector<double> rounds;
  const auto time_steps = [&](auto& session) {
    for (int i = 0; i < kWarmup; ++i) session.run();
    for (int r = 0; r < kRounds; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      for (int i = 0; i < kSteps; ++i) session.run();
      double seconds = MPI_Wtime() - start;
      MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      rounds.push_back(seconds / kSteps * 1e6);
    }
  };
  if (variables)
    with_hookfuse_session_using(RandomBatch(batch / comm.size()),
                                hf::GradientDescentOptimizer(0.01), time_steps,
                                hd::AverageVariablesHook(comm));
  else
    with_hookfuse_session_using(RandomBatch(batch / comm.size()),
                                hf::GradientDescentOptimizer(0.01), time_steps,
                                hd::AverageGradientsHook(comm));
  std::sort(rounds.begin(), rounds.end());
  if (comm.rank() == 0) {
    std::printf(
        "mpi_step: %d rank(s) x %ld thread(s), global batch %ld (%ld per rank), "
        "averaging %s: median %.0f us per step (min %.0f, max %.0f; %d rounds of %d "
        "steps)\n",
        comm.size(), threads, batch, batch / comm.size(), average, rounds[rounds.size() / 2],
        rounds.front(), rounds.back(), kRounds, kSteps);
  }
  return 0;
}
