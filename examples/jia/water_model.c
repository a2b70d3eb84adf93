/* jia_water's model (water_model.h). */
#include "water_model.h"

#include <math.h>

static long n;
static double box;
static const double kCutoff2 = 6.25, kStep = 0.0005;

void water_model_init(long molecules) {
  n = molecules;
  box = ceil(cbrt((double)n)) * 1.2;
}

long water_molecules(void) {
  return n;
}

void water_initial_positions(double* position, long first, long last) {
  const long side = (long)ceil(cbrt((double)n));
  for (long i = first; i < last; ++i) {
    unsigned long h = (unsigned long)i * 2654435761ul;
    for (int d = 0; d < 3; ++d) {
      const long cell = d == 0 ? i % side : d == 1 ? (i / side) % side : i / (side * side);
      h = h * 6364136223846793005ul + 1442695040888963407ul;
      position[(i - first) * 3 + d] =
          ((double)cell + 0.5 + 0.1 * ((double)(h >> 40) / 16777216.0 - 0.5)) * 1.2;
    }
  }
}

void water_compute_forces(const double* position, long first, long last, double* force) {
  for (long i = first; i < last; ++i)
    for (long k = 1; k <= n / 2; ++k) {
      const long j = (i + k) % n;
      if (n % 2 == 0 && k == n / 2 && i >= n / 2) continue; /* that pair is counted from j */
      double delta[3], r2 = 0;
      for (int d = 0; d < 3; ++d) {
        double x = position[i * 3 + d] - position[j * 3 + d];
        x -= box * nearbyint(x / box); /* the nearest image */
        delta[d] = x;
        r2 += x * x;
      }
      if (r2 >= kCutoff2) continue;
      const double inv2 = 1.0 / r2, inv6 = inv2 * inv2 * inv2;
      const double scale = 24.0 * inv6 * (2.0 * inv6 - 1.0) * inv2;
      for (int d = 0; d < 3; ++d) {
        force[i * 3 + d] += scale * delta[d];
        force[j * 3 + d] -= scale * delta[d];
      }
    }
}

void water_move(double* position, double* velocity, const double* force, long first, long last) {
  for (long i = first; i < last; ++i)
    for (int d = 0; d < 3; ++d) {
      velocity[(i - first) * 3 + d] += kStep * force[i * 3 + d];
      double x = position[i * 3 + d] + kStep * velocity[(i - first) * 3 + d];
      position[i * 3 + d] = x - box * floor(x / box);
    }
}
