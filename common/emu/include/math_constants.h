/* Stand-in for CUDA's <math_constants.h> (CPU emulator): the constants a
 * kernel is likely to use, with CUDA's names. */
#ifndef COMMON_EMU_MATH_CONSTANTS_H
#define COMMON_EMU_MATH_CONSTANTS_H
#include <math.h>
#define CUDART_INF_F INFINITY
#define CUDART_NAN_F NAN
#define CUDART_INF ((double)INFINITY)
#define CUDART_NAN ((double)NAN)
#define CUDART_MAX_NORMAL_F 3.402823466e38f
#define CUDART_MIN_DENORM_F 1.40129846e-45f
#define CUDART_L2E_F 1.442695041f
#define CUDART_LN2_F 0.693147181f
#define CUDART_PI_F 3.141592654f
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_L2E 1.4426950408889634e+0
#define CUDART_LN2 6.9314718055994529e-1
#endif
