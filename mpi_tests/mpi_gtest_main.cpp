// GoogleTest main for tests run under mpirun: initialises MPI, runs the tests
// on every rank and reduces the outcome, so a failure on any rank fails the
// run. Only rank 0 prints: other ranks record their failures, which rank 0
// gathers and prints with each rank's number at the end. A fatal failure
// ends the job at once (AbortOnFatalFailure).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

class FailureRecorder : public ::testing::EmptyTestEventListener {
 public:
  explicit FailureRecorder(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    text_ += "[rank " + std::to_string(rank_) + "] " +
             (result.file_name() ? result.file_name() : "?") + ":" +
             std::to_string(result.line_number()) + ": Failure\n" + result.summary() + "\n";
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed())
      text_ += "[rank " + std::to_string(rank_) + "] [  FAILED  ] " + info.test_suite_name() + "." +
               info.name() + "\n";
  }
  const std::string& text() const { return text_; }

 private:
  int rank_;
  std::string text_;
};

// A fatal failure (ASSERT_*) returns from the test on this rank only, while
// the other ranks may wait for it: in a collective, or for a DSM lock it
// held. Rather than leave them hanging until ctest's timeout, the job ends
// at once, with the failure on stderr.
class AbortOnFatalFailure : public ::testing::EmptyTestEventListener {
 public:
  explicit AbortOnFatalFailure(int rank) : rank_(rank) {}
  // Kept here: gtest's current_test_info() would wait for the lock it holds
  // while it reports a result.
  void OnTestStart(const ::testing::TestInfo& test) override { test_ = &test; }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.fatally_failed()) return;
    std::fprintf(stderr,
                 "[rank %d] %s:%d: Failure\n%s\n[rank %d] [  FAILED  ] %s.%s: aborting the job\n",
                 rank_, result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary(), rank_, test_ ? test_->test_suite_name() : "?",
                 test_ ? test_->name() : "?");
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

 private:
  int rank_;
  const ::testing::TestInfo* test_ = nullptr;
};

// Rank 0 receives every other rank's recorded failures and prints them.
void print_failures_of_other_ranks(const std::string& mine, int rank, int size) {
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size), offsets(size);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(rank == 0 ? total : 0, '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  if (rank == 0 && total > 0) std::printf("\nFailures on other ranks:\n%s", all.c_str());
}

// The MPI thread level to ask for: MPI_THREAD_SERIALIZED, or the level a
// --thread-level=funneled|single|multiple argument names (threading tests).
int requested_thread_level(int argc, char** argv) {
  const std::string prefix = "--thread-level=";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(prefix, 0) != 0) continue;
    const std::string level = arg.substr(prefix.size());
    if (level == "single") return MPI_THREAD_SINGLE;
    if (level == "funneled") return MPI_THREAD_FUNNELED;
    if (level == "multiple") return MPI_THREAD_MULTIPLE;
  }
  return MPI_THREAD_SERIALIZED;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, requested_thread_level(argc, argv), &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto* recorder = new FailureRecorder(rank);
  ::testing::UnitTest::GetInstance()->listeners().Append(new AbortOnFatalFailure(rank));
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(recorder);  // gtest owns it from here
  }
  int local = RUN_ALL_TESTS();
  print_failures_of_other_ranks(rank != 0 ? recorder->text() : std::string(), rank, size);
  if (rank == 0) delete recorder;
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && global != 0 && local == 0)
    std::printf("[  FAILED  ] tests failed on another rank (listed above)\n");
  MPI_Finalize();
  return global;
}
