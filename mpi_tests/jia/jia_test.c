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
  CHECK(started >= 0 && started < 60);
  jia_config(WVEC, ON);
  jia_startstat();
  test_allocations();
  test_synchronisation();
  test_messages();
  jia_stopstat();
  CHECK(jia_clock() >= started);

  int total = 0;
  jia_reduce((char*)&failures, (char*)&total, 1, SUM_INT, 0);
  jia_bcast((char*)&total, sizeof total, 0);
  if (jiapid == 0) printf("jia_test: %d failed checks on %d hosts\n", total, jiahosts);
  jia_exit();
  return total == 0 ? 0 : 1;
}
