/* Taught in lesson 8. Path 3b of the row engine: path 3's cluster, one row
 * per cluster of C = 2 ... 8 CTAs (sm_90), with each CTA's whole piece in
 * shared memory, copied there by the Tensor Memory Accelerator instead of
 * by the threads (lessons/08_fastest/README.md, "Path 3b"). 16-bit rows
 * of more pieces take as many CTAs, which meet as path 3g's do, through
 * global memory.
 *
 * In path 3 each thread loads its part of the piece, waits for it, folds it
 * into its (m, d) and only then loads more: the bytes in flight on an SM
 * are what its threads have asked for and not yet used. Here one thread
 * asks for the whole piece at once, as FX_BULK_CHUNKS bulk copies
 * (cp.async.bulk), each signalling an mbarrier when its bytes have landed;
 * the threads fold chunk k as soon as it is there while the copy engine
 * still moves the others. A 64 KB piece is in flight from the CTA's first
 * instruction, and the threads issue no load instructions at all: float16
 * rows of 2^16 run at 93.5 % of the copy against path 3's 82.1 % on the
 * H100 (docs/experiments/rows-bulk-path.md has float32 and the H200).
 *
 * A bulk copy moves multiples of 16 bytes between 16-byte aligned
 * addresses, so the pieces are whole 16-byte vectors. Aligned views cut
 * their rows into pieces as they are; peeled views (PEEL: each row of x
 * starts where the same row of y does, N of any length) cut the row's body
 * of whole vectors (lesson 5's view_cut) into pieces, and CTA 0's first
 * threads take the head and tail, at most 6 floats or 14 16-bit values,
 * one element each, as path 3 does: float32 rows of 50257 (GPT-2's
 * vocabulary) run at 93.9 % of copy against 88.3 % without bulk copies,
 * H100 (lessons/08_fastest/README.md, "Path 3b"). Views whose x and y rows
 * are misaligned against each other take path 3. Compiled for sm_90 and up
 * and for the CPU emulator, where the copy is a memcpy by the thread that
 * would have started it; older targets get an empty body, never launched.
 * The copies and the fold are bulk_copy.cuh's; the kernel, a template
 * over the operation, is path3b_bulk.cuh's. */
#include "path3b_bulk.cuh"

void fx_bulk_plan(fastest_plan *p, int c, long long seg, int esize)
{
    p->block = p->threads_per_row = FX_BULK_BLOCK;
    p->cluster = c <= FX_BULK_MAX_C ? c : 1; /* past a cluster's size: c pieces through global memory */
    p->splits = c <= FX_BULK_MAX_C ? 0 : c;
    p->segment = seg;
    p->smem_bytes = seg * esize; /* the whole piece, in the storage type */
}

int fx_bulk_shape(dtype t, long long cols, int *c_out, long long *seg_out)
{
    if (t == DTYPE_F16) return fx_bulk_shape_op<rows_op_softmax, __half>(cols, c_out, seg_out);
    if (t == DTYPE_BF16) return fx_bulk_shape_op<rows_op_softmax, __nv_bfloat16>(cols, c_out, seg_out);
    return fx_bulk_shape_op<rows_op_softmax, float>(cols, c_out, seg_out);
}

void fx_run_bulk(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                 long long rows, long long cols, cudaStream_t stream)
{
    if (t == DTYPE_F16)
        fx_run_bulk_op<rows_op_softmax>(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else if (t == DTYPE_BF16)
        fx_run_bulk_op<rows_op_softmax>(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols,
                                        stream);
    else fx_run_bulk_op<rows_op_softmax>(p, (const float *)x, ldx, (float *)y, ldy, rows, cols, stream);
}
