// What a program that does not catch an error sees: one line per rank that
// threw, naming the error, and the whole job aborted through MPI_Abort,
// instead of std::terminate's abort, whose SIGABRT Open MPI and UCX turn
// into some 20 lines of backtrace per rank, interleaved across ranks.
// Installed by the first Runtime of the process unless
// MPIDSM_TERMINATE_HANDLER=0, and only in place of the C++ library's own
// handler: a program's handler of its own is left alone.
#pragma once

namespace mpidsm::detail {

void report_uncaught_errors_in_one_line();

}  // namespace mpidsm::detail
