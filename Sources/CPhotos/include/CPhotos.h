#ifndef WEATHERBOARD_CPHOTOS_H
#define WEATHERBOARD_CPHOTOS_H

#include <stddef.h>
#include <stdint.h>

/* libvips behind a small, non-variadic interface Swift can call (vips's own is variadic). */

enum { WB_PHOTO_JPEG = 1, WB_PHOTO_PNG = 2, WB_PHOTO_WEBP = 3, WB_PHOTO_HEIF = 4 };

typedef struct {
    int width;
    int height;
    int orientation;
} wb_photo_header;

typedef struct {
    void *data;
    size_t length;
} wb_photo_bytes;

typedef struct {
    wb_photo_bytes large_webp;
    wb_photo_bytes small_webp;
    wb_photo_bytes jpeg;
    int width;
    int height;
    int small_width;
    int small_height;
    uint64_t difference_hash;
} wb_photo_output;

/* Starts libvips once: no operation cache, untrusted loaders (SVG, PDF, ImageMagick) blocked,
   one thread per operation. Returns 0, or -1 with wb_photo_error() set. */
int wb_photos_start(void);

/* Reads only the header of an image in the named format (no pixels are decoded). */
int wb_photo_read_header(const void *bytes, size_t length, int format, wb_photo_header *header);

/* Decodes, applies the EXIF orientation, converts to sRGB and writes a WebP fitting
   large_edge × large_edge, one small_edge wide (at most) and a JPEG fitting large_edge, all
   without metadata, and a
   64-bit difference hash of the picture. Gives up after `seconds`. */
int wb_photo_render(const void *bytes, size_t length, int format, int large_edge, int small_edge,
                    int quality, double seconds, wb_photo_output *output);

/* A 64-bit difference hash of an image in any of the formats (tests compare pictures with it). */
int wb_photo_difference_hash(const void *bytes, size_t length, int format, uint64_t *hash);

void wb_photo_free(wb_photo_output *output);

/* Writes a JPEG's picture as HEIC, for the tests' fixtures (Pillow writes no HEIC). The result
   is freed with g_free through wb_photo_free_bytes. */
int wb_photo_write_heif(const void *jpeg, size_t length, wb_photo_bytes *heif);
void wb_photo_free_bytes(wb_photo_bytes *bytes);

/* The last error on this thread (valid until the next call). */
const char *wb_photo_error(void);

#endif
