/* Exercise 1: the smallest float whose expf is infinite on the GPU. */
#ifndef LESSON01_EXERCISE_H
#define LESSON01_EXERCISE_H

/* Returns the smallest float t such that expf(t) == +inf in device code. */
float exp_overflow_threshold(void);

#endif
