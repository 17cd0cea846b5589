/* The freestanding runtime's roundevenf (what quantizing kernels call on Cortex-M, which has
 * no instruction for it and no libm) against half-to-even rounding computed in double: ties
 * at every magnitude, values next to them, the limits of the float range, zeros, infinities
 * and NaN, and a sweep of random bit patterns. Exit status 0 when every one agrees. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

float roundevenf(float x);

static double reference(double x) {
  const double down = floor(x);
  const double rest = x - down;
  if (rest > 0.5)
    return down + 1.0;
  if (rest < 0.5)
    return down;
  return fmod(down, 2.0) == 0.0 ? down : down + 1.0;
}

static int failures;

static void check(float x) {
  const float got = roundevenf(x);
  if (isnan(x)) {
    if (!isnan(got))
      ++failures;
    return;
  }
  const float want = isinf(x) ? x : (float)reference((double)x);
  uint32_t a, b;
  memcpy(&a, &got, 4);
  memcpy(&b, &want, 4);
  /* Exact, and the sign of a zero too (-0.4 rounds to -0). */
  if (a != b && !(want == 0.0f && got == 0.0f && signbit(got) == signbit(x))) {
    if (failures++ < 10)
      fprintf(stderr, "roundevenf(%.9g) = %.9g, want %.9g\n", x, got, want);
  }
}

int main(void) {
  const float specials[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f,
                            0.50000006f, 1.0f, 8388607.5f, 8388608.0f, 16777215.0f, 1e30f,
                            -1e30f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; ++i)
    check(specials[i]);
  for (int k = -2000; k <= 2000; ++k) { /* every tie and its neighbours up to 1000 */
    const float tie = (float)k + 0.5f;
    check(tie);
    check(nextafterf(tie, INFINITY));
    check(nextafterf(tie, -INFINITY));
  }
  uint32_t state = 12345u;
  for (int i = 0; i < 2000000; ++i) {
    state = state * 1664525u + 1013904223u;
    float x;
    memcpy(&x, &state, 4);
    check(x);
  }
  if (failures)
    fprintf(stderr, "%d values rounded wrongly\n", failures);
  else
    printf("PASS: roundevenf agrees with half-to-even rounding\n");
  return failures != 0;
}
