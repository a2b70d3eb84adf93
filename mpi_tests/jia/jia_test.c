/* JIAJIA's interface as a JIAJIA program uses it: no MPI call anywhere, run
 * under mpirun. Checks every call's meaning; exits non-zero when any check
 * failed on any host. */
#include <jia.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(cond)                                                                             \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      ++failures;                                                                               \
      fprintf(stderr, "host %d: %s:%d: check failed: %s\n", jiapid, __FILE__, __LINE__, #cond); \
    }                                                                                           \
  } while (0)

static long page;

static void test_allocations(void) {
  /* jia_alloc3: blocks of 2 pages dealt from host 1 % hosts. */
  const int start = 1 % jiahosts;
  char* cyclic = (char*)jia_alloc3((int)(4 * jiahosts * page), (int)(2 * page), start);
  for (int p = 0; p < 4 * jiahosts; ++p)
    CHECK(jia_home(cyclic + p * page) == (start + p / 2) % jiahosts);
  /* Zeroed, as JIAJIA's freshly mapped memory. */
  int zero = 1;
  for (long i = 0; i < 4 * jiahosts * page; ++i) zero &= cyclic[i] == 0;
  CHECK(zero);

  /* jia_alloc: one host per call, in turn. */
  for (int call = 0; call < jiahosts + 1; ++call) {
    char* whole = (char*)jia_alloc((int)(3 * page));
    CHECK(jia_home(whole) == call % jiahosts && jia_home(whole + 2 * page) == call % jiahosts);
  }
  char* on_last = (char*)jia_alloc2p((int)page, jiahosts - 1);
  CHECK(jia_home(on_last) == jiahosts - 1);
  char* on_first = (char*)jia_alloc1((int)(2 * page));
  CHECK(jia_home(on_first + page) == 0);
  char* dealt = (char*)jia_alloc2((int)(2 * jiahosts * page), (int)page);
  CHECK(jia_home(dealt + page) == 1 % jiahosts);
  char* random = (char*)jia_alloc_random((int)page);
  const int random_home = jia_home(random);
  CHECK(random_home >= 0 && random_home < jiahosts);

  /* jia_alloc4: block sizes 1 page then 2 pages, from host 0. */
  int blocks[2] = {(int)page, (int)(2 * page)};
  char* varied = (char*)jia_alloc4((int)(3 * jiahosts * page), blocks, 2, 0);
  for (int h = 0; h < jiahosts; ++h) CHECK(jia_home(varied + h * page) == h);
  for (int h = 0; h < jiahosts; ++h) {
    char* second_round = varied + jiahosts * page + 2 * h * page;
    CHECK(jia_home(second_round) == h && jia_home(second_round + page) == h);
  }

  /* jia_alloc_array: block k of array[k mod n] bytes on host k mod hosts
   * (n at most the hosts). */
  int sizes[2] = {(int)(2 * page), (int)page};
  const int n = jiahosts < 2 ? 1 : 2;
  const int blocks_dealt = 3 * jiahosts;
  char* arrayed = (char*)jia_alloc_array((int)(3 * jiahosts * page), sizes, n);
  long offset = 0;
  for (int k = 0; k < blocks_dealt; ++k) {
    const long pages = sizes[k % n] / page;
    for (long p = 0; p < pages && offset + p < 3 * jiahosts; ++p)
      CHECK(jia_home(arrayed + (offset + p) * page) == k % jiahosts);
    offset += pages;
  }

  /* jia_free gives the pages back: a new allocation reads as zero there. */
  char* freed = (char*)jia_alloc2p((int)(2 * page), 0);
  freed[jiapid] = 1;
  jia_barrier();
  jia_free(freed);
  char* again = (char*)jia_alloc2p((int)(2 * page), 0);
  CHECK(again[jiapid] == 0);
  jia_free(again);
}

/* Sums the iterations [first, last] a host was given, and counts them, over
 * every host: a division covers the range once. */
static void check_division(int first, int last, int begin, int end) {
  int sums[2] = {0, end - begin + 1}, totals[2] = {0, 0};
  for (int i = begin; i <= end; ++i) sums[0] += i;
  jia_reduce((char*)sums, (char*)totals, 2, SUM_INT, 0);
  if (jiapid == 0) {
    CHECK(totals[1] == last - first + 1);
    CHECK(totals[0] == (first + last) * (last - first + 1) / 2);
  }
}

static void test_load_balancing(void) {
  int begin = 1, end = 100;
  jia_divtask(&begin, &end);
  check_division(1, 100, begin, end);
  /* Evenly: 100 / hosts each, the last host taking the remainder. */
  const int share = 100 / jiahosts;
  CHECK(end - begin + 1 == (jiapid == jiahosts - 1 ? 100 - (jiahosts - 1) * share : share));
  jia_loadcheck(); /* LOADBAL off: nothing, and no collective */

  /* With LOADBAL on, host 0 computing three times as long per iteration
   * gets fewer iterations after a check. */
  jia_config(LOADBAL, ON);
  begin = 1, end = 120;
  jia_divtask(&begin, &end);
  const int even = end - begin + 1;
  for (int i = begin; i <= end; ++i) usleep(jiapid == 0 ? 600 : 200);
  jia_loadcheck();
  begin = 1, end = 120;
  jia_divtask(&begin, &end);
  check_division(1, 120, begin, end);
  if (jiahosts > 1 && jiapid == 0) CHECK(end - begin + 1 < even);
  jia_config(LOADBAL, OFF);
}

/* HMIG ON: a page one host alone writes, homed on another, moves home to
 * it at a barrier (at the latest after its second interval); OFF: no page
 * moves. */
static void test_home_migration(void) {
  if (jiahosts < 2) return;
  const int next = (jiapid + 1) % jiahosts;
  for (int on = 0; on <= 1; ++on) {
    jia_config(HMIG, on ? ON : OFF);
    char* pages = (char*)jia_alloc3((int)(jiahosts * page), (int)page, 0);
    char* mine = pages + next * page; /* homed on the next host */
    CHECK(jia_home(mine) == next);
    for (int round = 1; round <= 3; ++round) {
      memset(mine, round, (size_t)page);
      jia_barrier();
    }
    CHECK(jia_home(mine) == (on ? jiapid : next));
    const int before = (jiapid + jiahosts - 1) % jiahosts;
    CHECK(pages[before * page + page - 1] == 3);
    jia_barrier();
  }
  jia_config(HMIG, OFF);
}

/* WVEC ON and JIA_COHERENCE give later allocations their policy: an
 * update or single_writer page never moves home, even with HMIG ON, and its
 * writes land. */
static void test_coherence_policies(void) {
  if (jiahosts < 2) return;
  const int next = (jiapid + 1) % jiahosts;
  const int before = (jiapid + jiahosts - 1) % jiahosts;
  jia_config(HMIG, ON);
  for (int option = 0; option <= 1; ++option) {
    if (option == 0)
      jia_config(WVEC, ON);
    else
      jia_config(JIA_COHERENCE, JIA_SINGLE_WRITER);
    char* pages = (char*)jia_alloc3((int)(jiahosts * page), (int)page, 0);
    char* mine = pages + next * page; /* homed on the next host */
    for (int round = 1; round <= 3; ++round) {
      memset(mine, round, (size_t)page);
      jia_barrier();
      CHECK(pages[before * page + page / 2] == round);
      jia_barrier(); /* read before the next round's writes */
    }
    CHECK(jia_home(mine) == next);
    jia_barrier();
  }
  jia_config(WVEC, OFF);
  jia_config(HMIG, OFF);
}

static void test_synchronisation(void) {
  int* counter = (int*)jia_alloc2p(sizeof(int), 0);
  for (int i = 0; i < 50; ++i) {
    jia_lock(5);
    ++*counter;
    jia_unlock(5);
  }
  jia_barrier();
  CHECK(*counter == 50 * jiahosts);
  jia_barrier();

  /* A condition variable: host 0 publishes, the others wait and see it. */
  if (jiapid == 0) {
    *counter = -1;
    jia_setcv(2);
  } else {
    jia_waitcv(2);
    CHECK(*counter == -1);
  }
  jia_barrier();
  jia_resetcv(2);
  jia_wait(); /* synchronises only */
}

static void test_messages(void) {
  char text[32];
  if (jiahosts > 1) {
    /* Host 0 sends late, while the last host already broadcasts below: an
     * any-source, any-tag receive must still get this message, never the
     * broadcast's. */
    if (jiapid == 0) {
      usleep(20000);
      jia_send("hello", 6, 1, 17);
    }
    if (jiapid == 1) {
      CHECK(jia_recv(text, sizeof text, MSG_PROC_ALL, MSG_TAG_ALL) == 6);
      CHECK(strcmp(text, "hello") == 0);
    }
  }
  double values[3] = {0, 0, 0};
  if (jiapid == jiahosts - 1) values[0] = 1.5, values[1] = -2, values[2] = 7;
  jia_bcast((char*)values, sizeof values, jiahosts - 1);
  CHECK(values[0] == 1.5 && values[1] == -2 && values[2] == 7);

  int mine[2] = {jiapid + 1, 10 * jiapid}, sum[2] = {0, 0};
  jia_reduce((char*)mine, (char*)sum, 2, SUM_INT, 0);
  if (jiapid == 0) CHECK(sum[0] == jiahosts * (jiahosts + 1) / 2);
  double d = jiapid, largest = -1;
  jia_reduce((char*)&d, (char*)&largest, 1, MAX_DOUBLE, 0);
  if (jiapid == 0) CHECK(largest == jiahosts - 1);
}

int main(int argc, char** argv) {
  /* Classic JIAJIA programs read the clock before jia_init. */
  const float before_init = jia_clock();
  if (before_init < 0) return 2;
  jia_init(argc, argv);
  /* An option JIAJIA does not have ends the program with a message. */
  if (argc > 1 && strcmp(argv[1], "--unknown-option") == 0) jia_config(99, ON);
  /* A barrier inside a critical section ends the program on every host
   * (the holder's barrier and the others' lock fail), never hangs. */
  if (argc > 1 && strcmp(argv[1], "--barrier-in-critical-section") == 0) {
    jia_lock(1);
    jia_barrier();
  }
  page = sysconf(_SC_PAGESIZE);
  const float started = jia_clock();
  CHECK(started >= before_init && started < 60);
  jia_config(ADWD, ON); /* accepted: mpidsm always has its effect */
  jia_startstat();
  test_allocations();
  test_synchronisation();
  test_messages();
  test_load_balancing();
  test_home_migration();
  test_coherence_policies();
  jia_stopstat();
  CHECK(jia_clock() >= started);

  int total = 0;
  jia_reduce((char*)&failures, (char*)&total, 1, SUM_INT, 0);
  jia_bcast((char*)&total, sizeof total, 0);
  if (jiapid == 0) printf("jia_test: %d failed checks on %d hosts\n", total, jiahosts);
  jia_exit();
  return total == 0 ? 0 : 1;
}
