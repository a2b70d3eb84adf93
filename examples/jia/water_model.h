/* jia_water's model, shared by the JIAJIA program (water.c) and its
 * one-sided MPI version (water_onesided.c): n molecules, Lennard-Jones
 * particles in a periodic box. Positions and forces are arrays of 3n
 * doubles (x, y, z per molecule). */
#ifndef WATER_MODEL_H
#define WATER_MODEL_H

/* Sets the molecule count and the box that holds them. */
void water_model_init(long molecules);
long water_molecules(void);

/* The positions of molecules [first, last), the same on every host. */
void water_initial_positions(double* position, long first, long last);
/* Forces between molecules [first, last) and the next n/2 molecules, added
 * into `force` (all n molecules): every pair once over all hosts. */
void water_compute_forces(const double* position, long first, long last, double* force);
/* Moves molecules [first, last) by their forces (`velocity` holds theirs). */
void water_move(double* position, double* velocity, const double* force, long first, long last);

#endif
