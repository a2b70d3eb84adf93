/* jia_water's JIAJIA program written with MPI-3 one-sided calls instead of
 * the DSM (jia_water -o 1 times it beside the other two): what MPI's own
 * one-sided runtime makes of the program's synchronisation. */
#ifndef WATER_ONESIDED_H
#define WATER_ONESIDED_H

typedef struct water_onesided water_onesided_t;

/* Collective over MPI_COMM_WORLD: windows for the shared positions and
 * forces of water_model_init's molecules, their pages dealt out to the
 * hosts in blocks of `block_pages` pages (as jia_alloc3 deals them);
 * this host moves molecules [first, last). */
water_onesided_t* water_onesided_create(long first, long last, long block_pages);
/* Collective: `steps` steps from the initial positions; returns the time
 * from the first barrier to the last step's end. */
double water_onesided_run(water_onesided_t* w, int steps);
/* Every molecule's position after the last run (3 doubles each). */
const double* water_onesided_positions(const water_onesided_t* w);
/* Collective. */
void water_onesided_free(water_onesided_t* w);

#endif
