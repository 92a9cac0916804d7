/* SPDX-License-Identifier: Apache-2.0 */
/* pngcheck FILE WIDTH HEIGHT MIN_INK: exit 0 when FILE is a PNG of WIDTH x HEIGHT pixels of
 * which at least MIN_INK are not white (so a blank or truncated render fails). */
#include <cairo.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: pngcheck FILE WIDTH HEIGHT MIN_INK\n");
        return 2;
    }
    cairo_surface_t *s = cairo_image_surface_create_from_png(argv[1]);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        fprintf(stderr, "%s: not a readable PNG\n", argv[1]);
        return 1;
    }
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    cairo_format_t fmt = cairo_image_surface_get_format(s);
    unsigned char *d = cairo_image_surface_get_data(s);
    long ink = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned px = *(unsigned *)(d + (long)y * stride + 4L * x);
            unsigned a = fmt == CAIRO_FORMAT_RGB24 ? 255 : px >> 24;
            unsigned r = (px >> 16) & 255, g = (px >> 8) & 255, b = px & 255;
            /* premultiplied: a transparent pixel over white counts as white */
            if (a > 0 && (r < 200 || g < 200 || b < 200))
                ink++;
        }
    cairo_surface_destroy(s);
    printf("%s: %d x %d, %ld inked pixels\n", argv[1], w, h, ink);
    if (w != atoi(argv[2]) || h != atoi(argv[3])) {
        fprintf(stderr, "%s: size %d x %d, expected %s x %s\n", argv[1], w, h, argv[2], argv[3]);
        return 1;
    }
    return ink >= atol(argv[4]) ? 0 : 1;
}
