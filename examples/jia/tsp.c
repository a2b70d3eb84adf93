/* Travelling salesman by branch and bound, as a JIAJIA program in the manner
 * of TreadMarks' TSP: host 0 lists every tour prefix of a few cities into
 * shared memory; hosts take prefixes from a shared work queue and search
 * each depth first, pruning with the best tour length known. The queue's
 * head and the best tour (length and path) are shared words under one lock:
 * taking a prefix also publishes the host's best and reads everyone's.
 * The MPI-native twin takes prefixes with MPI_Fetch_and_op on a counter in
 * host 0's window and shares the bound with MPI_Fetch_and_op(MPI_MIN).
 * Both must find the optimal length a sequential search finds.
 *   mpirun -np N jia_tsp [-c 17 cities] [-d 3 prefix cities] [-r 3] [-s 1] */
#include <jia.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jia_app.h"

enum { kMaxCities = 24, kQueueLock = 0 };

static int cities, depth;
static int distance[kMaxCities][kMaxCities];
/* Per city: its two shortest edges (for the lower bound: every city of a
 * tour has two edges) and the other cities nearest first (search order). */
static int shortest[kMaxCities], second_shortest[kMaxCities];
static char nearest[kMaxCities][kMaxCities];

struct Best {
  int length;
  char path[kMaxCities];
};

/* The queue and the bound, on one page homed on host 0, under kQueueLock. */
struct Shared {
  long next; /* the next prefix to take */
  struct Best best;
};

static void make_cities(void) {
  double x[kMaxCities], y[kMaxCities];
  unsigned long state = 12345;
  for (int c = 0; c < cities; ++c) {
    state = state * 6364136223846793005ul + 1442695040888963407ul;
    x[c] = (double)(state >> 40) / (double)(1ul << 24) * 1000.0;
    state = state * 6364136223846793005ul + 1442695040888963407ul;
    y[c] = (double)(state >> 40) / (double)(1ul << 24) * 1000.0;
  }
  for (int a = 0; a < cities; ++a)
    for (int b = 0; b < cities; ++b) distance[a][b] = (int)lround(hypot(x[a] - x[b], y[a] - y[b]));
  for (int a = 0; a < cities; ++a) {
    int count = 0;
    for (int b = 0; b < cities; ++b) {
      if (b == a) continue;
      int at = count++;
      while (at > 0 && distance[a][(int)nearest[a][at - 1]] > distance[a][b]) {
        nearest[a][at] = nearest[a][at - 1];
        --at;
      }
      nearest[a][at] = (char)b;
    }
    shortest[a] = distance[a][(int)nearest[a][0]];
    second_shortest[a] = distance[a][(int)nearest[a][1]];
  }
}

/* A good first bound, the same on every host: the nearest-neighbour tour
 * improved by 2-opt moves until none helps. */
static void heuristic_tour(char* path) {
  int used = 1;
  path[0] = 0;
  for (int l = 1; l < cities; ++l)
    for (int k = 0; k < cities - 1; ++k) {
      const int c = nearest[(int)path[l - 1]][k];
      if (!(used & (1 << c))) {
        path[l] = (char)c;
        used |= 1 << c;
        break;
      }
    }
  for (int improved = 1; improved;) {
    improved = 0;
    for (int i = 1; i < cities - 1; ++i)
      for (int j = i + 1; j < cities; ++j) {
        const int a = path[i - 1], b = path[i], c = path[j], d = path[(j + 1) % cities];
        if (distance[a][c] + distance[b][d] < distance[a][b] + distance[c][d]) {
          for (int l = i, r = j; l < r; ++l, --r) {
            const char t = path[l];
            path[l] = path[r];
            path[r] = t;
          }
          improved = 1;
        }
      }
  }
}

/* Depth-first search below a partial tour, nearest cities first; `best`
 * is the bound, improved in place. `unvisited_edges`: the sum of the two
 * shortest edges of every city not on the path. A tour through the path
 * costs at least (2 cost + shortest edges of both ends + unvisited_edges) / 2. */
static void search(char* path, int length, int cost, int visited, int unvisited_edges,
                   struct Best* best) {
  const int last = path[length - 1];
  if (length == cities) {
    const int total = cost + distance[last][0];
    if (total < best->length) {
      best->length = total;
      memcpy(best->path, path, (size_t)cities);
    }
    return;
  }
  for (int k = 0; k < cities - 1; ++k) {
    const int c = nearest[last][k];
    if (visited & (1 << c)) continue;
    const int next_cost = cost + distance[last][c];
    const int rest = unvisited_edges - shortest[c] - second_shortest[c];
    const int twice_bound = 2 * next_cost + shortest[c] + shortest[0] + rest;
    if (twice_bound >= 2 * best->length) continue;
    path[length] = (char)c;
    search(path, length + 1, next_cost, visited | (1 << c), rest, best);
  }
}

/* Every prefix of `depth` cities starting at city 0 (count returned; `out`
 * may be NULL to count). */
static long list_prefixes(char* out) {
  long count = 0;
  char path[kMaxCities] = {0};
  int choice[kMaxCities] = {0};
  int level = 1;
  choice[1] = 0;
  while (level > 0) {
    int c = ++choice[level];
    int used = 0;
    for (int l = 0; l < level; ++l) used |= 1 << path[l];
    while (c < cities && (used & (1 << c))) c = ++choice[level];
    if (c >= cities) {
      choice[level--] = 0;
      continue;
    }
    path[level] = (char)c;
    if (level + 1 == depth) {
      if (out) memcpy(out + count * depth, path, (size_t)depth);
      ++count;
    } else {
      choice[++level] = 0;
    }
  }
  return count;
}

/* A prefix's state for search(): its cost and the bound of what remains. */
static void search_prefix(const char* prefix, struct Best* best) {
  char path[kMaxCities];
  memcpy(path, prefix, (size_t)depth);
  int cost = 0, visited = 0, unvisited_edges = 0;
  for (int l = 0; l < depth; ++l) {
    visited |= 1 << path[l];
    if (l > 0) cost += distance[(int)path[l - 1]][(int)path[l]];
  }
  for (int c = 0; c < cities; ++c)
    if (!(visited & (1 << c))) unvisited_edges += shortest[c] + second_shortest[c];
  search(path, depth, cost, visited, unvisited_edges, best);
}

static int tour_length(const char* path) {
  int total = 0, seen = 0;
  for (int l = 0; l < cities; ++l) {
    if (seen & (1 << path[l])) return -1;
    seen |= 1 << path[l];
    total += distance[(int)path[l]][(int)path[(l + 1) % cities]];
  }
  return path[0] == 0 ? total : -1;
}

/* The MPI twin's window. Open MPI 4.1, run bare across hosts (btl/tcp),
 * selects osc/rdma and then fails to create any window instead of falling
 * back to osc/pt2pt (open-mpi/ompi#9871): say so and how to avoid it,
 * rather than die in MPI's generic abort. */
static void allocate_window(MPI_Aint bytes, int unit, void* base, MPI_Win* window) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int status = MPI_Win_allocate(bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, base, window);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  fprintf(stderr,
          "jia_tsp: rank %d: the MPI twin cannot create its window (MPI_Win_allocate: %s). Open "
          "MPI 4.1 selects osc/rdma over btl/tcp and then fails (open-mpi/ompi#9871); run with "
          "OMPI_MCA_osc=ucx,pt2pt (scripts/env.sh sets it)\n",
          jiapid, text);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char** argv) {
  jia_init(argc, argv);
  const char* usage = "[-c cities] [-d prefix cities] [-r repetitions] [-s 1]";
  cities = (int)app_option(argc, argv, 'c', 17, usage);
  depth = (int)app_option(argc, argv, 'd', 3, usage);
  const int reps = (int)app_option(argc, argv, 'r', 5, usage);
  const int stats = app_option(argc, argv, 's', 0, usage) != 0;
  if (cities < 4 || cities > kMaxCities || depth < 2 || depth >= cities)
    jia_error("-c %d -d %d: use 4 .. %d cities and 2 .. cities-1 prefix cities", cities, depth,
              kMaxCities);
  make_cities();
  struct Best first_bound;
  heuristic_tour(first_bound.path);
  first_bound.length = tour_length(first_bound.path);
  const long prefixes = list_prefixes(NULL);
  struct Shared* shared = (struct Shared*)jia_alloc1(sizeof(struct Shared));
  char* queue = (char*)jia_alloc1((int)(prefixes * depth));
  if (jiapid == 0) list_prefixes(queue);

  long* counter = NULL;
  int* bound = NULL;
  MPI_Win counter_window, bound_window;
  allocate_window(jiapid == 0 ? sizeof(long) : 0, sizeof(long), &counter, &counter_window);
  allocate_window(jiapid == 0 ? sizeof(int) : 0, sizeof(int), &bound, &bound_window);
  char* local_queue = malloc((size_t)(prefixes * depth));
  list_prefixes(local_queue);

  double dsm_time[16], mpi_time[16];
  const int runs = reps < 16 ? reps : 16;
  struct Best dsm_best = {INT_MAX, {0}}, mpi_best = {INT_MAX, {0}};
  traffic_tally_t traffic = {0};
  for (int rep = 0; rep < runs; ++rep) {
    app_begin_dsm(&traffic);
    if (jiapid == 0) {
      shared->next = 0;
      shared->best = first_bound;
    }
    if (stats && rep == runs - 1) jia_startstat();
    double start = start_together();
    jia_barrier(); /* publishes the initialisation: timed (report.h) */
    struct Best mine = first_bound;
    for (;;) {
      jia_lock(kQueueLock);
      if (mine.length < shared->best.length) shared->best = mine;
      mine = shared->best;
      const long taken = shared->next < prefixes ? shared->next++ : -1;
      jia_unlock(kQueueLock);
      if (taken < 0) break;
      search_prefix(queue + taken * depth, &mine);
    }
    jia_barrier();
    dsm_time[rep] = MPI_Wtime() - start;
    app_end_dsm(&traffic);
    if (stats && rep == runs - 1) jia_stopstat();
    tally_begin_mpi(&traffic);
    dsm_best = shared->best;

    MPI_Win_lock_all(0, counter_window);
    MPI_Win_lock_all(0, bound_window);
    if (jiapid == 0) {
      *counter = 0;
      *bound = first_bound.length;
    }
    MPI_Win_sync(counter_window);
    MPI_Win_sync(bound_window);
    start = start_together();
    struct Best found = first_bound;
    const long one = 1;
    for (;;) {
      long taken = 0;
      MPI_Fetch_and_op(&one, &taken, MPI_LONG, 0, 0, MPI_SUM, counter_window);
      int global = INT_MAX;
      MPI_Fetch_and_op(&found.length, &global, MPI_INT, 0, 0, MPI_MIN, bound_window);
      MPI_Win_flush(0, bound_window);
      MPI_Win_flush(0, counter_window);
      if (taken >= prefixes) break;
      struct Best search_best = found;
      if (global < search_best.length) search_best.length = global; /* a bound, no path */
      search_prefix(local_queue + taken * depth, &search_best);
      if (search_best.length < found.length && search_best.length < global) found = search_best;
    }
    MPI_Win_unlock_all(bound_window);
    MPI_Win_unlock_all(counter_window);
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_time[rep] = MPI_Wtime() - start;
    tally_end_mpi(&traffic);
    /* The optimum and a tour of that length, from whichever host found it. */
    struct {
      int length, host;
    } here = {found.length, jiapid}, best_here;
    MPI_Allreduce(&here, &best_here, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    mpi_best = found;
    MPI_Bcast(&mpi_best, sizeof mpi_best, MPI_BYTE, best_here.host, MPI_COMM_WORLD);
  }
  char title[160];
  snprintf(title, sizeof title, "jia_tsp %d cities, %ld prefixes of %d, %d host%s", cities,
           prefixes, depth, jiahosts, jiahosts > 1 ? "s" : "");
  app_report(title, dsm_time, mpi_time, runs, (double)prefixes, "prefixes/s");
  tally_report(&traffic);

  int ok = 1;
  if (jiapid == 0) {
    struct Best sequential = first_bound;
    for (long p = 0; p < prefixes; ++p) search_prefix(local_queue + p * depth, &sequential);
    ok = dsm_best.length == sequential.length && mpi_best.length == sequential.length &&
         tour_length(dsm_best.path) == sequential.length &&
         tour_length(mpi_best.path) == sequential.length;
    printf("  optimal tour: %d (DSM %d, MPI %d)\n", sequential.length, dsm_best.length,
           mpi_best.length);
  }
  const int status = app_verdict(ok, "DSM and MPI-native optimal tours");
  MPI_Win_free(&counter_window);
  MPI_Win_free(&bound_window);
  free(local_queue);
  jia_exit();
  return status;
}
