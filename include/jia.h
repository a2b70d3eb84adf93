/** \file
 * \ingroup jiajia
 * JIAJIA 3.0's programming interface on mpidsm: a JIAJIA application builds
 * with `mpicc -I<prefix>/include app.c -lmpidsm_jia -lmpidsm` and runs with
 * `mpirun -np N app`, unchanged. docs/jiajia.md maps every call and lists
 * every difference from JIAJIA. */
#ifndef JIA_PUBLIC
#define JIA_PUBLIC

#ifdef __cplusplus
extern "C" {
#endif

/** \addtogroup jiajia
 * @{ */

/** \name Hosts */
/** @{ */
/** This process's host number (its MPI rank) and the number of hosts. */
#define jiahosts hostc
#define jiapid jia_pid
extern int jia_pid;
extern int hostc;
/** @} */

/** Initialises MPI when the program has not, then mpidsm and its DSM. */
void jia_init(int argc, char** argv);
/** A barrier, then mpidsm is shut down (and MPI, when jia_init started it). */
void jia_exit(void);

/** \name Allocation */
/** @{ */
/** Shared memory, zeroed, at the same address on every host. Collective:
 * every host makes the same calls with the same arguments. Homes:
 *   jia_alloc3(size, block, start): blocks of `block` bytes (page-rounded)
 *     dealt cyclically from host `start`;
 *   jia_alloc2(size, block) = jia_alloc3(size, block, 0);
 *   jia_alloc2p(size, host): all on `host`; jia_alloc1(size): all on host 0;
 *   jia_alloc(size): all on one host, the next host at each call (0, 1, ...);
 *   jia_alloc_random(size): all on one host chosen pseudo-randomly, the same
 *     on every host;
 *   jia_alloc4(size, blocks, n, start): like jia_alloc3, with block size
 *     blocks[i] in round i (i advancing each time host 0 comes round);
 *   jia_alloc_array(size, array, n): block k of array[k mod n] bytes
 *     (page-rounded) on host k mod hosts, 1 <= n <= hosts.
 * jia_free(address), collective too, returns an allocation (its start). */
unsigned long jia_alloc(int size);
unsigned long jia_alloc1(int size);
unsigned long jia_alloc2(int size, int block);
unsigned long jia_alloc2p(int size, int host);
unsigned long jia_alloc3(int size, int block, int starthost);
unsigned long jia_alloc4(int size, int* blocks, int n, int starthost);
unsigned long jia_alloc_random(int size);
unsigned long jia_alloc_array(int size, int* array, int n);
void jia_free(void* address);
/** @} */

/** \name Synchronisation */
/** @{ */
/** Locks (any id below MPIDSM_LOCKS, 16384 by default): acquire and release
 * points of scope consistency. jia_barrier: release, barrier, acquire of
 * everything. jia_wait: a barrier that synchronises only (no consistency). */
void jia_lock(int lock);
void jia_unlock(int lock);
void jia_barrier(void);
void jia_wait(void);
/** @} */

/** \name Condition variables */
/** @{ */
/** Condition variables: setcv releases and sets, waitcv waits until set and
 * acquires, resetcv clears. Ids below MPIDSM_LOCKS. */
void jia_setcv(int cv);
void jia_resetcv(int cv);
void jia_waitcv(int cv);
/** @} */

/** Prints the formatted message on stderr and ends every host. */
void jia_error(char* format, ...);
/** \name Statistics */
/** @{ */
/** Collective. startstat clears the DSM statistics; stopstat prints the
 * table of every host's statistics since then on host 0's stderr. Both
 * return 0. */
unsigned int jia_startstat(void);
unsigned int jia_stopstat(void);
/** mpidsm's extension (not in JIAJIA), for setting a program's
 * communication beside an MPI twin's: what this host has done since
 * jia_init, whatever jia_startstat cleared. `messages` and `bytes` it sent
 * through mpidsm (mpidsm::TransportTraffic: loads and stores of pages
 * mapped from a host on this node are no messages); `pages` its DSM
 * brought in (misses, prefetch, and updates at synchronisations);
 * `intervals` it ended (barriers and lock acquires); `waited_ns` it spent
 * in barriers, syncs and waits for locks, which shows ranks out of step
 * (one computes while the others wait). Not collective. */
typedef struct {
  unsigned long long messages;  /**< sent through mpidsm */
  unsigned long long bytes;     /**< their payload bytes */
  unsigned long long pages;     /**< brought in by the DSM */
  unsigned long long intervals; /**< ended: barriers, syncs, lock acquires */
  unsigned long long waited_ns; /**< in barriers, syncs and lock waits */
} jia_traffic_t;
jia_traffic_t jia_traffic(void);
/** @} */
/** Seconds since the program started; works before jia_init. */
float jia_clock(void);

/** \name Messages */
/** @{ */
/** Messages between hosts (tags 0 .. 2^24-1; MSG_PROC_ALL and MSG_TAG_ALL
 * match any). jia_recv returns the bytes received. */
#define MSG_PROC_ALL (-1)
#define MSG_TAG_ALL (-1)
void jia_send(char* buffer, int length, int tohost, int tag);
int jia_recv(char* buffer, int length, int fromhost, int tag);
/** @} */
/** \name Collectives */
/** @{ */
/** Collective (on mpidsm's own communicator: a MSG_TAG_ALL receive never
 * takes their messages): root's buffer to every host; count elements
 * combined with op into root's recvbuf. */
void jia_bcast(char* buffer, int length, int root);
void jia_reduce(char* sendbuf, char* recvbuf, int count, int op, int root);
#define SUM_INT 0
#define MAX_INT 1
#define MIN_INT 2
#define SUM_FLOAT 10
#define MAX_FLOAT 11
#define MIN_FLOAT 12
#define SUM_DOUBLE 20
#define MAX_DOUBLE 21
#define MIN_DOUBLE 22
/** @} */

/** \name Options */
/** @{ */
/** JIAJIA's run-time options. mpidsm's protocol has ADWD's effect always;
 * HMIG ON moves a page home to its only writer at every barrier, OFF keeps
 * every home (without a call: MPIDSM_HOME_MIGRATION, adaptive by default);
 * WVEC ON gives the allocations made after it the update policy (acquires
 * bring copies up to date in place rather than dropping them), OFF the
 * default policy again; BROADCAST needs nothing; LOADBAL turns on load
 * balancing (jia_divtask). mpidsm's own option JIA_COHERENCE takes one of
 * the JIA_* policies below for the allocations made after it
 * (mpidsm::Coherence, docs/consistency.md).
 * Any other option, or another value, ends the program with a message. */
#ifndef ON
#define OFF 0
#define ON 1
#endif
#define HMIG 0
#define ADWD 1
#define BROADCAST 2
#define LOADBAL 3
#define WVEC 4
#define JIA_COHERENCE 5
#define JIA_ADAPTIVE 0
#define JIA_INVALIDATE 1
#define JIA_UPDATE 2
#define JIA_READ_MOSTLY 3
#define JIA_SINGLE_WRITER 4
void jia_config(int option, int value);
/** @} */

/** \name Load balancing */
/** @{ */
/** Divides the loop iterations [*begin, *end] (inclusive) among the hosts:
 * evenly (the last host taking the remainder), or with LOADBAL on in
 * proportion to each host's computing power as jia_loadcheck measured it.
 * Sets *begin and *end to this host's part (empty: *end == *begin - 1). */
void jia_divtask(int* begin, int* end);
/** With LOADBAL on, collective: each host's computing time since the last
 * check (or since LOADBAL was turned on) re-estimates its power, unless the
 * times differ by less than 5%; does nothing with LOADBAL off. */
void jia_loadcheck(void);
/** @} */

/** mpidsm extension: the host that is home of the page holding `address`. */
int jia_home(void* address);

/** \name Write-notice hints */
/** @{ */
/** Write-notice hints of some JIAJIA versions: nothing to do. */
#define jia_wtnt(a, b)
#define jia_wtntw(a)
#define jia_wtntd(a)
#define jia_errexit jia_error
/** @} */

/** \name ANL/SPLASH macros */
/** @{ */
/** Argonne (ANL/SPLASH) macros, as JIAJIA's header defines them. */
extern int jia_lock_index;
#define Maxlocks 64
#define LOCKDEC(x) int x;
#define LOCKINIT(x) (x) = (jia_lock_index++) % Maxlocks;
#define LOCK(x) jia_lock(x);
#define UNLOCK(x) jia_unlock(x);
#define ALOCKDEC(x, y) int x[y];
#define ALOCKINIT(x, y)                            \
  {                                                \
    int jia_i_;                                    \
    for (jia_i_ = 0; jia_i_ < (y); jia_i_++) {     \
      (x)[jia_i_] = (jia_lock_index++) % Maxlocks; \
    }                                              \
  }
#define ALOCK(x, y) jia_lock((x)[y]);
#define AULOCK(x, y) jia_unlock((x)[y]);
#define BARDEC(x) int x;
#define BARINIT(x)
#define BARRIER(x, y) jia_barrier();
#define EXTERN_ENV
#define MAIN_ENV
#define MAIN_INITENV(x, y)
#define MAIN_END
#define WAIT_FOR_END(x) jia_barrier();
#define CLOCK(x) x = jia_clock();
#define G_MALLOC(x) jia_alloc1((x));
/** @} */

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* JIA_PUBLIC */
