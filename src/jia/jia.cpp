// JIAJIA's interface (include/jia.h) on mpidsm's C++ API. JIAJIA reports
// errors by ending the program, so every mpidsm error here does the same
// (jia_error), naming the call and mpidsm's message.
#include "jia.h"

#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/mpi_exchange.hpp"
#include "load_balance.hpp"
#include "mpidsm/dsm.hpp"
#include "mpidsm/runtime.hpp"

int jia_pid = 0;
int hostc = 1;
int jia_lock_index = 0;

namespace {

using Clock = std::chrono::steady_clock;

// jia_clock's origin: when the program started (the library was loaded),
// so programs may read it before jia_init, as classic JIAJIA programs do.
const Clock::time_point program_start = Clock::now();

double seconds_since(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

struct Jia {
  bool started_mpi = false;
  std::optional<mpidsm::Runtime> runtime;
  std::optional<mpidsm::Dsm> dsm;
  int next_alloc_host = 0;  // jia_alloc's rotating home
  // jia_config(WVEC or JIA_COHERENCE): the policy of later allocations.
  std::optional<mpidsm::Coherence> coherence;
  std::uint64_t random_state = 1;  // jia_alloc_random's, the same on every host
  // jia_config(LOADBAL, ON): jia_divtask divides by `powers`, which
  // jia_loadcheck re-estimates from the time computed since `computing_since`.
  bool load_balance = false;
  std::vector<double> powers;
  Clock::time_point computing_since;
  // jia_traffic's counts from the DSM statistics jia_startstat cleared.
  unsigned long long pages_cleared = 0, intervals_cleared = 0, waited_cleared = 0;
};

static_assert(JIA_ADAPTIVE == static_cast<int>(mpidsm::Coherence::adaptive) &&
                  JIA_SINGLE_WRITER == static_cast<int>(mpidsm::Coherence::single_writer),
              "the JIA_* policies number mpidsm::Coherence alike");
Jia* jia = nullptr;

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "jia[host %d]: %s\n", jia_pid, message.c_str());
  std::fflush(stderr);
  mpidsm::detail::abort_job(1);
}

Jia& state(const char* call) {
  if (!jia) die(std::string(call) + ": jia_init has not been called");
  return *jia;
}

// Runs an mpidsm call on behalf of a jia_* call; an error ends the program.
template <class F>
auto run(const char* call, F&& f) {
  try {
    return f(state(call));
  } catch (const mpidsm::Error& e) {
    die(std::string(call) + ": " + e.what());
  }
}

void* allocate(const char* call, int size, const mpidsm::Placement& placement) {
  if (size <= 0) die(std::string(call) + ": size " + std::to_string(size) + " is not positive");
  return run(call, [&](Jia& j) {
    return static_cast<void*>(
        j.dsm->allocate<std::byte>(static_cast<std::size_t>(size), placement,
                                   j.coherence.value_or(j.dsm->default_coherence())));
  });
}

void check_host(const char* call, const char* what, int host) {
  if (host < 0 || host >= hostc)
    die(std::string(call) + ": " + what + " " + std::to_string(host) + " is not a host (0 .. " +
        std::to_string(hostc - 1) + ")");
}

std::size_t pages_of(int bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return std::max<std::size_t>(1, (static_cast<std::size_t>(bytes) + page - 1) / page);
}

// An allocation dealt in blocks to the hosts in turn from `starthost`: block
// k (pages_of(blocks[index_of(k)]) bytes, the last one cut to the size) on
// host (starthost + k) mod hosts.
template <class IndexOf>
unsigned long deal_blocks(const char* call, int size, int starthost, const int* blocks,
                          IndexOf&& index_of) {
  if (size <= 0) die(std::string(call) + ": size " + std::to_string(size) + " is not positive");
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<mpidsm::PlacementBlock> list;
  std::size_t left = pages_of(size) * page;
  for (std::size_t k = 0; left > 0; ++k) {
    const std::size_t i = index_of(k);
    if (blocks[i] <= 0)
      die(std::string(call) + ": block size [" + std::to_string(i) +
          "] = " + std::to_string(blocks[i]) + " is not positive");
    const std::size_t bytes = std::min(left, pages_of(blocks[i]) * page);
    list.push_back({bytes, static_cast<int>((static_cast<std::size_t>(starthost) + k) %
                                            static_cast<std::size_t>(hostc))});
    left -= bytes;
  }
  return reinterpret_cast<unsigned long>(
      allocate(call, size, mpidsm::Placement::blocks(std::move(list))));
}

// A lock or condition variable id, a length or a count: never negative.
std::size_t non_negative(const char* call, const char* what, int value) {
  if (value < 0)
    die(std::string(call) + ": " + what + " " + std::to_string(value) + " is negative");
  return static_cast<std::size_t>(value);
}

// A DSM operation on lock or condition variable `id`, on behalf of `call`.
void on_id(const char* call, const char* what, int id,
           void (mpidsm::Dsm::*operation)(std::size_t)) {
  run(call, [&](Jia& j) { ((*j.dsm).*operation)(non_negative(call, what, id)); });
}

int user_tag(const char* call, int tag, bool receiving) {
  if (receiving && tag == MSG_TAG_ALL) return mpidsm::any_tag;
  if (tag < 0 || tag > mpidsm::max_tag)
    die(std::string(call) + ": tag " + std::to_string(tag) + " is outside 0 .. " +
        std::to_string(mpidsm::max_tag));
  return tag;
}

// jia_reduce's operation as MPI's, from JIAJIA's numbering (type * 10 + kind).
bool reduction_of(int op, MPI_Datatype& type, MPI_Op& operation) {
  static const MPI_Datatype types[] = {MPI_INT, MPI_FLOAT, MPI_DOUBLE};
  static const MPI_Op operations[] = {MPI_SUM, MPI_MAX, MPI_MIN};
  if (op < 0 || op / 10 > 2 || op % 10 > 2) return false;
  type = types[op / 10];
  operation = operations[op % 10];
  return true;
}

}  // namespace

extern "C" {

void jia_init(int argc, char** argv) {
  if (jia) die("jia_init: called twice");
  int initialized = 0;
  MPI_Initialized(&initialized);
  auto j = std::make_unique<Jia>();
  if (!initialized) {
    MPI_Init(&argc, &argv);
    j->started_mpi = true;
  }
  try {
    j->runtime.emplace(MPI_COMM_WORLD);
    jia_pid = j->runtime->rank();
    hostc = j->runtime->size();
    j->dsm.emplace(*j->runtime);
  } catch (const mpidsm::Error& e) {
    die(std::string("jia_init: ") + e.what());
  }
  // As under JIAJIA, only host 0 talks to the terminal: the others' standard
  // output is discarded (their standard error is not).
  if (jia_pid != 0) {
    std::fflush(stdout);
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      close(null);
    }
  }
  j->powers.assign(static_cast<std::size_t>(hostc), 1.0 / hostc);
  jia = j.release();
}

void jia_exit(void) {
  Jia& j = state("jia_exit");
  run("jia_exit", [](Jia& jj) { jj.dsm->barrier(); });
  std::fflush(stdout);
  const bool finalize_mpi = j.started_mpi;
  try {
    j.dsm.reset();
    j.runtime->finalize();
  } catch (const mpidsm::Error& e) {
    die(std::string("jia_exit: ") + e.what());
  }
  delete jia;
  jia = nullptr;
  if (finalize_mpi) MPI_Finalize();
}

unsigned long jia_alloc3(int size, int block, int starthost) {
  check_host("jia_alloc3", "starthost", starthost);
  if (block <= 0) die("jia_alloc3: block " + std::to_string(block) + " is not positive");
  return reinterpret_cast<unsigned long>(
      allocate("jia_alloc3", size, mpidsm::Placement::cyclic(pages_of(block), starthost)));
}

unsigned long jia_alloc2(int size, int block) {
  return jia_alloc3(size, block, 0);
}

unsigned long jia_alloc2p(int size, int host) {
  check_host("jia_alloc2p", "host", host);
  return reinterpret_cast<unsigned long>(
      allocate("jia_alloc2p", size, mpidsm::Placement::on(host)));
}

unsigned long jia_alloc1(int size) {
  return reinterpret_cast<unsigned long>(allocate("jia_alloc1", size, mpidsm::Placement::on(0)));
}

unsigned long jia_alloc(int size) {
  Jia& j = state("jia_alloc");
  const int host = j.next_alloc_host;
  j.next_alloc_host = (host + 1) % hostc;
  return reinterpret_cast<unsigned long>(allocate("jia_alloc", size, mpidsm::Placement::on(host)));
}

unsigned long jia_alloc_random(int size) {
  Jia& j = state("jia_alloc_random");
  // Not rand(): the application may draw from it differently on each host.
  j.random_state = j.random_state * 6364136223846793005ull + 1442695040888963407ull;
  const int host = static_cast<int>((j.random_state >> 33) % static_cast<std::uint64_t>(hostc));
  return reinterpret_cast<unsigned long>(
      allocate("jia_alloc_random", size, mpidsm::Placement::on(host)));
}

unsigned long jia_alloc4(int size, int* blocks, int n, int starthost) {
  check_host("jia_alloc4", "starthost", starthost);
  if (!blocks || n <= 0) die("jia_alloc4: blocks is NULL or n " + std::to_string(n) + " < 1");
  // The round advances each time host 0 comes round.
  return deal_blocks("jia_alloc4", size, starthost, blocks, [&](std::size_t k) {
    return (static_cast<std::size_t>(starthost) + k) / static_cast<std::size_t>(hostc) %
           static_cast<std::size_t>(n);
  });
}

unsigned long jia_alloc_array(int size, int* array, int n) {
  if (!array || n <= 0 || n > hostc)
    die("jia_alloc_array: array is NULL or n " + std::to_string(n) + " is outside 1 .. " +
        std::to_string(hostc));
  // Block k on host k mod hosts, of array[k mod n] bytes.
  return deal_blocks("jia_alloc_array", size, 0, array,
                     [&](std::size_t k) { return k % static_cast<std::size_t>(n); });
}

void jia_free(void* address) {
  run("jia_free", [&](Jia& j) { j.dsm->free(address); });
}

void jia_lock(int lock) {
  on_id("jia_lock", "lock", lock, &mpidsm::Dsm::lock);
}

void jia_unlock(int lock) {
  on_id("jia_unlock", "lock", lock, &mpidsm::Dsm::unlock);
}

void jia_barrier(void) {
  run("jia_barrier", [](Jia& j) { j.dsm->barrier(); });
}

void jia_wait(void) {
  run("jia_wait", [](Jia& j) {
    MPI_Request request;
    if (MPI_Ibarrier(j.runtime->comm(), &request) != MPI_SUCCESS)
      die("jia_wait: MPI_Ibarrier failed");
    j.runtime->transport().wait_mpi(request, "jia_wait");
  });
}

void jia_setcv(int cv) {
  on_id("jia_setcv", "cv", cv, &mpidsm::Dsm::set_flag);
}

void jia_resetcv(int cv) {
  on_id("jia_resetcv", "cv", cv, &mpidsm::Dsm::reset_flag);
}

void jia_waitcv(int cv) {
  on_id("jia_waitcv", "cv", cv, &mpidsm::Dsm::wait_flag);
}

void jia_error(char* format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format ? format : "(null)", args);
  va_end(args);
  die(std::string("jia_error: ") + text);
}

unsigned int jia_startstat(void) {
  run("jia_startstat", [](Jia& j) {
    const mpidsm::DsmStats cleared = j.dsm->stats();
    j.pages_cleared += cleared.pages_brought_in();
    j.intervals_cleared += cleared.intervals_ended();
    j.waited_cleared += cleared.waited_ns();
    j.dsm->reset_stats();
  });
  return 0;
}

jia_traffic_t jia_traffic(void) {
  jia_traffic_t t{};
  run("jia_traffic", [&](Jia& j) {
    const mpidsm::TransportTraffic sent = j.runtime->transport().traffic();
    const mpidsm::DsmStats s = j.dsm->stats();
    t = {sent.messages, sent.bytes, j.pages_cleared + s.pages_brought_in(),
         j.intervals_cleared + s.intervals_ended(), j.waited_cleared + s.waited_ns()};
  });
  return t;
}

unsigned int jia_stopstat(void) {
  run("jia_stopstat", [](Jia& j) {
    if (jia_pid == 0) std::fprintf(stderr, "jia: DSM statistics since jia_startstat\n");
    j.dsm->print_stats(stderr);  // collective: host 0 prints every host's column
  });
  return 0;
}

float jia_clock(void) {
  return static_cast<float>(seconds_since(program_start));
}

void jia_send(char* buffer, int length, int tohost, int tag) {
  const std::size_t bytes = non_negative("jia_send", "length", length);
  check_host("jia_send", "host", tohost);
  const int user = user_tag("jia_send", tag, false);
  run("jia_send", [&](Jia& j) { j.runtime->transport().send(tohost, user, buffer, bytes); });
}

int jia_recv(char* buffer, int length, int fromhost, int tag) {
  const std::size_t capacity = non_negative("jia_recv", "length", length);
  if (fromhost != MSG_PROC_ALL) check_host("jia_recv", "host", fromhost);
  const int source = fromhost == MSG_PROC_ALL ? mpidsm::any_source : fromhost;
  const int user = user_tag("jia_recv", tag, true);
  return run("jia_recv", [&](Jia& j) {
    return static_cast<int>(j.runtime->transport().recv(source, user, buffer, capacity).size);
  });
}

// The collectives run on the runtime's private communicator, never through
// tagged messages: an application's jia_recv with MSG_TAG_ALL would
// otherwise take their messages (as it could under JIAJIA, whose
// collectives used reserved tags). They are non-blocking collectives waited
// for by the transport, which ends the wait when a host dies.
void jia_bcast(char* buffer, int length, int root) {
  check_host("jia_bcast", "root", root);
  non_negative("jia_bcast", "length", length);
  run("jia_bcast", [&](Jia& j) {
    MPI_Request request;
    if (MPI_Ibcast(buffer, length, MPI_BYTE, root, j.runtime->comm(), &request) != MPI_SUCCESS)
      die("jia_bcast: MPI_Ibcast failed");
    j.runtime->transport().wait_mpi(request, "jia_bcast");
  });
}

void jia_reduce(char* sendbuf, char* recvbuf, int count, int op, int root) {
  check_host("jia_reduce", "root", root);
  MPI_Datatype type;
  MPI_Op operation;
  if (!reduction_of(op, type, operation))
    die("jia_reduce: op " + std::to_string(op) + " is unknown");
  non_negative("jia_reduce", "count", count);
  run("jia_reduce", [&](Jia& j) {
    MPI_Request request;
    if (MPI_Ireduce(sendbuf, recvbuf, count, type, operation, root, j.runtime->comm(), &request) !=
        MPI_SUCCESS)
      die("jia_reduce: MPI_Ireduce failed");
    j.runtime->transport().wait_mpi(request, "jia_reduce");
  });
}

void jia_config(int option, int value) {
  Jia& j = state("jia_config");
  if (option == JIA_COHERENCE) {
    if (value < JIA_ADAPTIVE || value > JIA_SINGLE_WRITER)
      die("jia_config: value " + std::to_string(value) +
          " for JIA_COHERENCE is not a policy (JIA_ADAPTIVE 0 .. JIA_SINGLE_WRITER 4)");
    j.coherence = static_cast<mpidsm::Coherence>(value);
    return;
  }
  if (value != OFF && value != ON)
    die("jia_config: value " + std::to_string(value) + " for option " + std::to_string(option) +
        " is neither ON (1) nor OFF (0)");
  switch (option) {
    case ADWD:       // mpidsm's homes write untracked while nobody copies a page
    case BROADCAST:  // barriers need no broadcast of notices
      return;
    case WVEC:  // updates to readers, for the allocations made from now on
      if (value == ON)
        j.coherence = mpidsm::Coherence::update;
      else
        j.coherence.reset();
      return;
    case LOADBAL:
      // Computing time is measured from here, then from each jia_loadcheck.
      if (value == ON && !j.load_balance) j.computing_since = Clock::now();
      j.load_balance = value == ON;
      return;
    case HMIG:  // JIAJIA's rule (a page's only writer becomes its home) at every barrier
      j.dsm->set_home_migration(value == ON ? mpidsm::HomeMigration::on
                                            : mpidsm::HomeMigration::off);
      return;
  }
  die("jia_config: unknown option " + std::to_string(option) +
      " (JIAJIA's are HMIG 0, ADWD 1, BROADCAST 2, LOADBAL 3 and WVEC 4; mpidsm adds "
      "JIA_COHERENCE 5)");
}

void jia_divtask(int* begin, int* end) {
  Jia& j = state("jia_divtask");
  if (!begin || !end) die("jia_divtask: begin or end is NULL");
  if (*end < *begin - 1)
    die("jia_divtask: the range " + std::to_string(*begin) + " .. " + std::to_string(*end) +
        " ends before it begins");
  if (hostc == 1) return;
  const std::vector<double> even(static_cast<std::size_t>(hostc), 1.0 / hostc);
  const auto part = mpidsm::jia::divide(*begin, *end, j.load_balance ? j.powers : even, jia_pid);
  *begin = part.first;
  *end = part.second;
}

// Collective with load balancing on (as JIAJIA's, which waited for host 0's
// answer): every host's time since the last check reaches every host, which
// computes the same new powers.
void jia_loadcheck(void) {
  Jia& j = state("jia_loadcheck");
  if (!j.load_balance) return;
  std::vector<double> seconds(static_cast<std::size_t>(hostc));
  double mine = seconds_since(j.computing_since);
  run("jia_loadcheck", [&](Jia& jj) {
    MPI_Request request;
    if (MPI_Iallgather(&mine, 1, MPI_DOUBLE, seconds.data(), 1, MPI_DOUBLE, jj.runtime->comm(),
                       &request) != MPI_SUCCESS)
      die("jia_loadcheck: MPI_Iallgather failed");
    jj.runtime->transport().wait_mpi(request, "jia_loadcheck");
  });
  j.powers = mpidsm::jia::rebalance(j.powers, seconds);
  j.computing_since = Clock::now();
}

int jia_home(void* address) {
  return run("jia_home", [&](Jia& j) { return j.dsm->home_of(address); });
}

}  // extern "C"
