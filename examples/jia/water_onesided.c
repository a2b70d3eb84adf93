/* jia_water's JIAJIA program with MPI-3 one-sided calls (water_onesided.h).
 * The same homes: each page of the position and force arrays lives in the
 * window of the host jia_alloc3 would give it. The same critical sections:
 * per force page, in the same order, an exclusive lock of its home, the page
 * fetched, the private forces added, the page put back. The same two
 * barriers per step, and every position read back from its home after the
 * second, as the DSM's faults would. MPI locks a host's whole window, not a
 * page: two pages with one home share a lock, which the DSM's page locks do
 * not. */
#include "water_onesided.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "water_model.h"

struct water_onesided {
  long first, last, doubles, page, block, pages;
  int hosts, me;
  MPI_Win force_win, position_win;
  double *position, *force, *private_force, *velocity, *page_buffer;
};

static int home_of(const water_onesided_t* w, long page) {
  return (int)((page / w->block) % w->hosts);
}

/* Where element x of an array lives in its home's window. */
static MPI_Aint displacement(const water_onesided_t* w, long x) {
  const long page = x / w->page;
  const long slot = page / w->block / w->hosts * w->block + page % w->block;
  return (MPI_Aint)(slot * w->page + x % w->page);
}

/* Elements [begin, end) of the array in `win` to or from `local` (indexed as
 * the whole array), page by page, in one epoch. */
static void transfer(const water_onesided_t* w, MPI_Win win, int put, double* local, long begin,
                     long end) {
  MPI_Win_lock_all(0, win);
  for (long x = begin; x < end;) {
    const long stop = (x / w->page + 1) * w->page < end ? (x / w->page + 1) * w->page : end;
    const int home = home_of(w, x / w->page), count = (int)(stop - x);
    if (put)
      MPI_Put(local + x, count, MPI_DOUBLE, home, displacement(w, x), count, MPI_DOUBLE, win);
    else
      MPI_Get(local + x, count, MPI_DOUBLE, home, displacement(w, x), count, MPI_DOUBLE, win);
    x = stop;
  }
  MPI_Win_unlock_all(win);
}

water_onesided_t* water_onesided_create(long first, long last, long block_pages) {
  water_onesided_t* w = calloc(1, sizeof *w);
  MPI_Comm_size(MPI_COMM_WORLD, &w->hosts);
  MPI_Comm_rank(MPI_COMM_WORLD, &w->me);
  w->first = first;
  w->last = last;
  w->doubles = water_molecules() * 3;
  w->page = sysconf(_SC_PAGESIZE) / (long)sizeof(double);
  w->block = block_pages;
  w->pages = (w->doubles + w->page - 1) / w->page;
  /* The pages homed here: whole blocks, the last one perhaps partly used. */
  const long blocks = (w->pages + w->block - 1) / w->block;
  const long mine = (blocks + w->hosts - 1) / w->hosts * w->block * w->page;
  double* base;
  MPI_Win_allocate((MPI_Aint)(mine * (long)sizeof(double)), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &w->force_win);
  MPI_Win_allocate((MPI_Aint)(mine * (long)sizeof(double)), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &w->position_win);
  const size_t bytes = (size_t)w->doubles * sizeof(double);
  w->position = malloc(bytes);
  w->force = malloc(bytes);
  w->private_force = malloc(bytes);
  w->velocity = malloc((size_t)(last - first) * 3 * sizeof(double));
  w->page_buffer = malloc((size_t)w->page * sizeof(double));
  return w;
}

/* The step's critical sections: this host's forces added into the shared
 * ones, a page at a time under its home's lock, starting at a different
 * page on each host (as water.c does). */
static void add_forces(water_onesided_t* w) {
  for (long k = 0; k < w->pages; ++k) {
    const long page = (k + w->me * w->pages / w->hosts) % w->pages;
    const long begin = page * w->page;
    const long end = begin + w->page < w->doubles ? begin + w->page : w->doubles;
    const int home = home_of(w, page), count = (int)(end - begin);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, home, 0, w->force_win);
    MPI_Get(w->page_buffer, count, MPI_DOUBLE, home, displacement(w, begin), count, MPI_DOUBLE,
            w->force_win);
    MPI_Win_flush(home, w->force_win);
    for (long x = begin; x < end; ++x) w->page_buffer[x - begin] += w->private_force[x];
    MPI_Put(w->page_buffer, count, MPI_DOUBLE, home, displacement(w, begin), count, MPI_DOUBLE,
            w->force_win);
    MPI_Win_unlock(home, w->force_win);
  }
}

double water_onesided_run(water_onesided_t* w, int steps) {
  const long mine_begin = w->first * 3, mine_end = w->last * 3;
  const size_t mine_bytes = (size_t)(mine_end - mine_begin) * sizeof(double);
  water_initial_positions(w->position + mine_begin, w->first, w->last);
  memset(w->force + mine_begin, 0, mine_bytes);
  memset(w->velocity, 0, mine_bytes);
  transfer(w, w->position_win, 1, w->position, mine_begin, mine_end);
  transfer(w, w->force_win, 1, w->force, mine_begin, mine_end);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  MPI_Barrier(MPI_COMM_WORLD); /* as the DSM's first barrier, which publishes them */
  transfer(w, w->position_win, 0, w->position, 0, mine_begin);
  transfer(w, w->position_win, 0, w->position, mine_end, w->doubles);
  for (int t = 0; t < steps; ++t) {
    memset(w->private_force, 0, (size_t)w->doubles * sizeof(double));
    water_compute_forces(w->position, w->first, w->last, w->private_force);
    add_forces(w);
    MPI_Barrier(MPI_COMM_WORLD);
    transfer(w, w->force_win, 0, w->force, mine_begin, mine_end);
    water_move(w->position, w->velocity, w->force, w->first, w->last);
    memset(w->force + mine_begin, 0, mine_bytes);
    transfer(w, w->force_win, 1, w->force, mine_begin, mine_end);
    transfer(w, w->position_win, 1, w->position, mine_begin, mine_end);
    MPI_Barrier(MPI_COMM_WORLD);
    transfer(w, w->position_win, 0, w->position, 0, mine_begin);
    transfer(w, w->position_win, 0, w->position, mine_end, w->doubles);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime() - start;
}

const double* water_onesided_positions(const water_onesided_t* w) {
  return w->position;
}

void water_onesided_free(water_onesided_t* w) {
  MPI_Win_free(&w->force_win);
  MPI_Win_free(&w->position_win);
  free(w->position);
  free(w->force);
  free(w->private_force);
  free(w->velocity);
  free(w->page_buffer);
  free(w);
}
