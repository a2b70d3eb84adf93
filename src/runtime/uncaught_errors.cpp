#include "uncaught_errors.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "common/mpi_exchange.hpp"

namespace mpidsm::detail {
namespace {

std::terminate_handler g_previous = nullptr;

[[noreturn]] void one_line_then_abort() {
  static std::atomic<bool> entered{false};
  const std::exception_ptr error = std::current_exception();
  // No exception (std::terminate called directly), or a second terminate
  // while this one runs: the previous handler says what it says.
  if (!error || entered.exchange(true)) {
    g_previous();
    std::abort();
  }
  const char* what = "an exception that is not a std::exception";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::fprintf(stderr, "%s (not caught: the job is aborted)\n", what);
  std::fflush(stderr);
  abort_job(1);
}

}  // namespace

void report_uncaught_errors_in_one_line() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  const std::terminate_handler current = std::get_terminate();
#if defined(__GLIBCXX__)
  if (current != __gnu_cxx::__verbose_terminate_handler) return;  // the program's own
#endif
  g_previous = current;
  std::set_terminate(one_line_then_abort);
}

}  // namespace mpidsm::detail
