/* SPDX-License-Identifier: Apache-2.0 */
/* The wire format: fp32 as it is, or bf16 (round to nearest even, NaN kept quiet), with an MPI
 * sum in bf16 for the reducing collectives. Kernels always run in fp32. */
#include "measure.h"

#include <string.h>

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);          /* round to nearest even */
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void bf16_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    uint16_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = to_bf16(from_bf16(a[i]) + from_bf16(b[i]));
}

void wire_open(wire *w, int width)
{
    w->width = width;
    if (width == 4) {
        w->type = MPI_FLOAT;
        w->sum = MPI_SUM;
    } else {
        MPI_Type_contiguous(2, MPI_BYTE, &w->type);
        MPI_Type_commit(&w->type);
        MPI_Op_create(bf16_sum, 1, &w->sum);
    }
}

void wire_close(wire *w)
{
    if (w->width == 2) {
        MPI_Op_free(&w->sum);
        MPI_Type_free(&w->type);
    }
}

void wire_pack(const wire *w, const float *in, size_t n, void *out)
{
    if (w->width == 4)
        memcpy(out, in, n * 4);
    else
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)out)[i] = to_bf16(in[i]);
}

void wire_unpack(const wire *w, const void *in, size_t n, float *out)
{
    if (w->width == 4)
        memcpy(out, in, n * 4);
    else
        for (size_t i = 0; i < n; i++)
            out[i] = from_bf16(((const uint16_t *)in)[i]);
}

float wire_round(const wire *w, float v) { return w->width == 4 ? v : from_bf16(to_bf16(v)); }
