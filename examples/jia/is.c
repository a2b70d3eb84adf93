/* Integer sort in the manner of NAS IS, as a JIAJIA program: 2^22 keys with
 * a bell-shaped distribution below 2^19, sorted by bucket ranges. Each host
 * generates its block of the shared key array and counts its keys per bucket
 * into its row of a shared histogram; after a barrier every host reads the
 * histograms, and host d takes a contiguous range of buckets holding about
 * N/P keys: its part of the shared output. Every host writes each of its
 * keys into the part of the key's host, after the keys earlier hosts put
 * there (known from the histograms); after a barrier each host sorts its
 * part into the same part of the output; a barrier ends the sort.
 * The MPI-native twin counts locally, agrees on the same ranges with
 * MPI_Allreduce, sends every key to its range's host with MPI_Alltoallv and
 * sorts what it receives. Both outputs must equal a sequential sort.
 *   mpirun -np N jia_is [-k 22: log2 keys] [-m 19: log2 key bound] [-r 3] [-s 1] */
#include <jia.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jia_app.h"

enum { kBucketBits = 10, kBuckets = 1 << kBucketBits };

static int key_bits; /* keys are below 2^key_bits */
static long key_set; /* which keys: every repetition sorts new ones */

/* Key i of the current key set, the same wherever it is generated: the sum
 * of four 16-bit uniforms (a bell shape, as NAS IS's generator gives),
 * scaled. */
static int key_of(long i) {
  uint64_t h = (uint64_t)(i + (key_set << 40)) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  h ^= h >> 31;
  const uint64_t sum = (h & 0xffff) + ((h >> 16) & 0xffff) + ((h >> 32) & 0xffff) + (h >> 48);
  return (int)((sum << key_bits) >> 18); /* sum < 2^18 */
}

static int bucket_of(int key) {
  return key >> (key_bits - kBucketBits);
}

/* The buckets [first[h], first[h+1]) of host h: contiguous ranges holding
 * about N/P keys each, from the global bucket counts. */
static void split(const long* totals, long keys, int* first) {
  long seen = 0;
  int h = 1;
  first[0] = 0;
  for (int bucket = 0; bucket < kBuckets && h < jiahosts; ++bucket) {
    seen += totals[bucket];
    while (h < jiahosts && seen >= keys * h / jiahosts) first[h++] = bucket + 1;
  }
  while (h <= jiahosts) first[h++] = kBuckets;
}

/* Counting sort of the keys `accept`ed from keys[0..count) into out, whose
 * values lie in [low, high); `counts` has high-low entries. */
static long sort_range(const int* keys, long count, int low, int high, long* counts, int* out) {
  memset(counts, 0, (size_t)(high - low) * sizeof(long));
  for (long i = 0; i < count; ++i)
    if (keys[i] >= low && keys[i] < high) ++counts[keys[i] - low];
  long at = 0;
  for (int v = low; v < high; ++v)
    for (long c = 0; c < counts[v - low]; ++c) out[at++] = v;
  return at;
}

int main(int argc, char** argv) {
  jia_init(argc, argv);
  const char* usage = "[-k log2 keys] [-m log2 key bound] [-r repetitions] [-s 1]";
  const long keys = 1L << app_option(argc, argv, 'k', 22, usage);
  key_bits = (int)app_option(argc, argv, 'm', 19, usage);
  const int reps = (int)app_option(argc, argv, 'r', 5, usage);
  const int stats = app_option(argc, argv, 's', 0, usage) != 0;
  if (key_bits < kBucketBits || key_bits > 30) jia_error("-m %d: use 10 .. 30", key_bits);
  const long mine_first = keys * jiapid / jiahosts, mine_last = keys * (jiapid + 1) / jiahosts;
  const long mine = mine_last - mine_first;
  const int bytes = (int)(keys * (long)sizeof(int));

  int* shared_keys = (int*)jia_alloc3(bytes, bytes / jiahosts, 0);
  /* Keys gathered by range, then the sorted output, both in parts homed on
   * their range's host (about: the parts follow the key distribution). */
  int* gathered_keys = (int*)jia_alloc3(bytes, bytes / jiahosts, 0);
  int* sorted = (int*)jia_alloc3(bytes, bytes / jiahosts, 0);
  /* Host h's histogram row is one page of its own. */
  const int row = (int)(((kBuckets * sizeof(long)) + 4095) / 4096 * 4096);
  long* histograms = (long*)jia_alloc3(row * jiahosts, row, 0);
  long* counts = malloc((size_t)(1L << key_bits) * sizeof(long));
  long totals[kBuckets];
  int first[65], range_first[65];
  if (jiahosts > 64) jia_error("jia_is supports up to 64 hosts");
  int* local_keys = malloc((size_t)mine * sizeof(int));
  int* received = malloc((size_t)keys * sizeof(int));
  int* local_sorted = malloc((size_t)keys * sizeof(int));
  int *send_counts = malloc((size_t)jiahosts * sizeof(int)),
      *recv_counts = malloc((size_t)jiahosts * sizeof(int)),
      *send_offsets = malloc((size_t)jiahosts * sizeof(int)),
      *recv_offsets = malloc((size_t)jiahosts * sizeof(int));
  int* outgoing = malloc((size_t)mine * sizeof(int));
  long my_count = 0;
  int owner_of_bucket[kBuckets]; /* the host whose range holds each bucket */

  double dsm_time[16], mpi_time[16];
  const int runs = reps < 16 ? reps : 16;
  traffic_tally_t traffic = {0};
  for (int rep = 0; rep < runs; ++rep) {
    app_begin_dsm(&traffic);
    key_set = rep; /* new keys each time: a repeated sort would move no data */
    for (long i = mine_first; i < mine_last; ++i) shared_keys[i] = key_of(i);
    if (stats && rep == runs - 1) jia_startstat();
    double start = start_together();
    jia_barrier(); /* publishes the initialisation: timed (report.h) */
    long* my_row = (long*)((char*)histograms + (long)row * jiapid);
    memset(my_row, 0, kBuckets * sizeof(long));
    for (long i = mine_first; i < mine_last; ++i) ++my_row[bucket_of(shared_keys[i])];
    jia_barrier();
    memset(totals, 0, sizeof totals);
    for (int h = 0; h < jiahosts; ++h) {
      const long* r = (const long*)((const char*)histograms + (long)row * h);
      for (int bucket = 0; bucket < kBuckets; ++bucket) totals[bucket] += r[bucket];
    }
    split(totals, keys, first);
    /* Where this host's keys for each host's range go: after the keys of
     * that range from hosts before it. */
    long next[64];
    for (int d = 0; d < jiahosts; ++d) {
      next[d] = 0;
      for (int bucket = 0; bucket < first[d]; ++bucket) next[d] += totals[bucket];
      for (int h = 0; h < jiapid; ++h) {
        const long* r = (const long*)((const char*)histograms + (long)row * h);
        for (int bucket = first[d]; bucket < first[d + 1]; ++bucket) next[d] += r[bucket];
      }
    }
    for (int d = 0; d < jiahosts; ++d)
      for (int bucket = first[d]; bucket < first[d + 1]; ++bucket) owner_of_bucket[bucket] = d;
    for (long i = mine_first; i < mine_last; ++i) {
      const int key = shared_keys[i];
      gathered_keys[next[owner_of_bucket[bucket_of(key)]]++] = key;
    }
    jia_barrier();
    /* This host's range, gathered from every host, sorted into the output. */
    long start_at = 0, end_at = 0;
    for (int bucket = 0; bucket < first[jiapid + 1]; ++bucket) {
      if (bucket < first[jiapid]) start_at += totals[bucket];
      end_at += totals[bucket];
    }
    const int shift = key_bits - kBucketBits;
    sort_range(gathered_keys + start_at, end_at - start_at, first[jiapid] << shift,
               first[jiapid + 1] << shift, counts, sorted + start_at);
    jia_barrier();
    dsm_time[rep] = MPI_Wtime() - start;
    app_end_dsm(&traffic);
    if (stats && rep == runs - 1) jia_stopstat();
    tally_begin_mpi(&traffic);

    for (long i = 0; i < mine; ++i) local_keys[i] = key_of(mine_first + i);
    start = start_together();
    long local_totals[kBuckets];
    memset(local_totals, 0, sizeof local_totals);
    for (long i = 0; i < mine; ++i) ++local_totals[bucket_of(local_keys[i])];
    MPI_Allreduce(local_totals, totals, kBuckets, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    split(totals, keys, range_first);
    /* Keys grouped by destination host: its bucket range. */
    for (int h = 0; h < jiahosts; ++h)
      for (int bucket = range_first[h]; bucket < range_first[h + 1]; ++bucket)
        owner_of_bucket[bucket] = h;
    memset(send_counts, 0, (size_t)jiahosts * sizeof(int));
    for (long i = 0; i < mine; ++i) ++send_counts[owner_of_bucket[bucket_of(local_keys[i])]];
    send_offsets[0] = 0;
    for (int h = 1; h < jiahosts; ++h) send_offsets[h] = send_offsets[h - 1] + send_counts[h - 1];
    for (long i = 0; i < mine; ++i) {
      const int h = owner_of_bucket[bucket_of(local_keys[i])];
      outgoing[send_offsets[h]++] = local_keys[i];
    }
    for (int h = 0; h < jiahosts; ++h) send_offsets[h] -= send_counts[h];
    MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
    recv_offsets[0] = 0;
    for (int h = 1; h < jiahosts; ++h) recv_offsets[h] = recv_offsets[h - 1] + recv_counts[h - 1];
    const long incoming = recv_offsets[jiahosts - 1] + recv_counts[jiahosts - 1];
    MPI_Alltoallv(outgoing, send_counts, send_offsets, MPI_INT, received, recv_counts, recv_offsets,
                  MPI_INT, MPI_COMM_WORLD);
    my_count = sort_range(received, incoming, range_first[jiapid] << shift,
                          range_first[jiapid + 1] << shift, counts, local_sorted);
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_time[rep] = MPI_Wtime() - start;
    tally_end_mpi(&traffic);
  }
  char title[160];
  snprintf(title, sizeof title, "jia_is 2^%d keys below 2^%d, %d host%s", (int)__builtin_ctzl(keys),
           key_bits, jiahosts, jiahosts > 1 ? "s" : "");
  app_report(title, dsm_time, mpi_time, runs, (double)keys / 1e6, "Mkeys/s");
  tally_report(&traffic);

  /* Host 0: a sequential counting sort of all keys against both outputs. */
  int* gathered = jiapid == 0 ? malloc((size_t)keys * sizeof(int)) : NULL;
  int count_here = (int)my_count;
  MPI_Gather(&count_here, 1, MPI_INT, recv_counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (jiapid == 0) {
    recv_offsets[0] = 0;
    for (int h = 1; h < jiahosts; ++h) recv_offsets[h] = recv_offsets[h - 1] + recv_counts[h - 1];
  }
  MPI_Gatherv(local_sorted, count_here, MPI_INT, gathered, recv_counts, recv_offsets, MPI_INT, 0,
              MPI_COMM_WORLD);
  int ok = 1;
  if (jiapid == 0) {
    int* all = malloc((size_t)keys * sizeof(int));
    int* expected = malloc((size_t)keys * sizeof(int));
    for (long i = 0; i < keys; ++i) all[i] = key_of(i);
    sort_range(all, keys, 0, 1 << key_bits, counts, expected);
    ok = memcmp(sorted, expected, (size_t)keys * sizeof(int)) == 0 &&
         memcmp(gathered, expected, (size_t)keys * sizeof(int)) == 0;
    free(all);
    free(expected);
  }
  const int status = app_verdict(ok, "DSM and MPI-native sorted keys");
  free(gathered);
  free(counts);
  free(local_keys);
  free(received);
  free(local_sorted);
  free(outgoing);
  free(send_counts);
  free(recv_counts);
  free(send_offsets);
  free(recv_offsets);
  jia_exit();
  return status;
}
