#include "CPhotos.h"
#include <vips/vips.h>
#include <string.h>
#include <time.h>

static _Thread_local char last_error[512];

static void take_error(const char *fallback) {
    const char *buffer = vips_error_buffer();
    const char *message = buffer && buffer[0] ? buffer : fallback;
    strncpy(last_error, message, sizeof last_error - 1);
    last_error[sizeof last_error - 1] = 0;
    size_t n = strlen(last_error);
    while (n > 0 && (last_error[n - 1] == '\n' || last_error[n - 1] == ' ')) last_error[--n] = 0;
    vips_error_clear();
}

const char *wb_photo_error(void) { return last_error; }

int wb_photos_start(void) {
    if (VIPS_INIT("weatherboard")) {
        take_error("vips_init failed");
        return -1;
    }
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_block_untrusted_set(TRUE);
    vips_concurrency_set(1);
    return 0;
}

/* The named format's loader only: the bytes were already recognised, and no other loader
   (SVG, PDF, a format nobody asked for) gets to read them. */
static int load(const void *bytes, size_t length, int format, VipsImage **out) {
    void *data = (void *)bytes;
    switch (format) {
    case WB_PHOTO_JPEG:
        return vips_jpegload_buffer(data, length, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    case WB_PHOTO_PNG:
        return vips_pngload_buffer(data, length, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    case WB_PHOTO_WEBP:
        return vips_webpload_buffer(data, length, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    case WB_PHOTO_HEIF:
        return vips_heifload_buffer(data, length, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    default:
        vips_error("weatherboard", "unknown format");
        return -1;
    }
}

int wb_photo_read_header(const void *bytes, size_t length, int format, wb_photo_header *header) {
    VipsImage *image = NULL;
    if (load(bytes, length, format, &image)) {
        take_error("unreadable image");
        return -1;
    }
    header->width = vips_image_get_width(image);
    header->height = vips_image_get_height(image);
    header->orientation = vips_image_get_orientation(image);
    g_object_unref(image);
    return 0;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Called as pixels are computed: past the deadline, the computation is stopped. */
static void on_eval(VipsImage *image, VipsProgress *progress, void *deadline) {
    (void)progress;
    if (now_seconds() > *(double *)deadline) vips_image_set_kill(image, TRUE);
}

/* The image on white where it has alpha (JPEG has none; the likeness hash ignores transparency). */
static int flatten_on_white(VipsImage *image, VipsImage **out) {
    double white[3] = {255, 255, 255};
    VipsArrayDouble *background = vips_array_double_new(white, 3);
    int failed = vips_flatten(image, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return failed;
}

static int hash_of(VipsImage *image, uint64_t *hash) {
    VipsImage *small = NULL, *grey = NULL, *bytes = NULL, *flat = NULL;
    int result = -1;
    VipsImage *source = image;
    if (vips_image_hasalpha(image)) {
        if (flatten_on_white(image, &flat)) goto done;
        source = flat;
    }
    if (vips_colourspace(source, &grey, VIPS_INTERPRETATION_B_W, NULL)) goto done;
    if (vips_thumbnail_image(grey, &small, 9, "height", 8, "size", VIPS_SIZE_FORCE, "no_rotate", TRUE, NULL)) goto done;
    if (vips_cast_uchar(small, &bytes, NULL)) goto done;
    size_t size = 0;
    unsigned char *pixels = vips_image_write_to_memory(bytes, &size);
    if (!pixels) goto done;
    int bands = vips_image_get_bands(bytes);
    uint64_t bits = 0;
    for (int y = 0; y < 8; y++) {
        for (int x = 0; x < 8; x++) {
            unsigned char left = pixels[(y * 9 + x) * bands], right = pixels[(y * 9 + x + 1) * bands];
            bits = bits << 1 | (left > right ? 1 : 0);
        }
    }
    g_free(pixels);
    *hash = bits;
    result = 0;
done:
    if (flat) g_object_unref(flat);
    if (grey) g_object_unref(grey);
    if (small) g_object_unref(small);
    if (bytes) g_object_unref(bytes);
    return result;
}

/* Removes every metadata item (EXIF, XMP, IPTC, ICC, PNG text, orientation...) from an image of
   our own: the savers' `strip` is not relied on alone (8.14's WebP writer kept EXIF and XMP). */
static void *remove_item(VipsImage *image, const char *name, GValue *value, void *removals) {
    (void)image; (void)value;
    g_ptr_array_add((GPtrArray *)removals, g_strdup(name));
    return NULL;
}

static void strip_metadata(VipsImage *image) {
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    vips_image_map(image, remove_item, names);
    for (guint i = 0; i < names->len; i++) vips_image_remove(image, g_ptr_array_index(names, i));
    g_ptr_array_free(names, TRUE);
}

void wb_photo_free(wb_photo_output *output) {
    g_free(output->large_webp.data);
    g_free(output->small_webp.data);
    g_free(output->jpeg.data);
    memset(output, 0, sizeof *output);
}

int wb_photo_render(const void *bytes, size_t length, int format, int large_edge, int small_edge,
                    int quality, double seconds, wb_photo_output *output) {
    memset(output, 0, sizeof *output);
    VipsImage *loaded = NULL, *thumb = NULL, *srgb = NULL, *memory = NULL, *small = NULL, *flat = NULL;
    int result = -1;
    double deadline = now_seconds() + seconds;
    if (load(bytes, length, format, &loaded)) goto fail;
    /* Orientation applied, shrunk while decoding where the format allows (JPEG, WebP). */
    if (vips_thumbnail_image(loaded, &thumb, large_edge, "height", large_edge, "size", VIPS_SIZE_DOWN, NULL)) goto fail;
    if (vips_colourspace(thumb, &srgb, VIPS_INTERPRETATION_sRGB, NULL)) goto fail;
    vips_image_set_progress(srgb, TRUE);
    g_signal_connect(srgb, "eval", G_CALLBACK(on_eval), &deadline);
    memory = vips_image_copy_memory(srgb);
    if (!memory) goto fail;
    strip_metadata(memory);
    output->width = vips_image_get_width(memory);
    output->height = vips_image_get_height(memory);
    if (vips_webpsave_buffer(memory, &output->large_webp.data, &output->large_webp.length, "Q", quality, "strip", TRUE, NULL)) goto fail;
    /* The small one is for a phone's column: its width is what a srcset's `w` picks by. */
    if (output->width > small_edge) {
        if (vips_resize(memory, &small, (double)small_edge / (double)output->width, NULL)) goto fail;
    } else {
        small = memory;
        g_object_ref(small);
    }
    output->small_width = vips_image_get_width(small);
    output->small_height = vips_image_get_height(small);
    if (vips_webpsave_buffer(small, &output->small_webp.data, &output->small_webp.length, "Q", quality, "strip", TRUE, NULL)) goto fail;
    VipsImage *opaque = memory;
    if (vips_image_hasalpha(memory)) {
        if (flatten_on_white(memory, &flat)) goto fail;
        opaque = flat;
    }
    if (vips_jpegsave_buffer(opaque, &output->jpeg.data, &output->jpeg.length, "Q", quality, "strip", TRUE,
                             "optimize_coding", TRUE, "interlace", TRUE, NULL)) goto fail;
    if (hash_of(memory, &output->difference_hash)) goto fail;
    result = 0;
    goto done;
fail:
    if (now_seconds() > deadline) {
        vips_error_clear();
        vips_error("weatherboard", "timeout");
    }
    take_error("the image could not be decoded");
    wb_photo_free(output);
done:
    if (loaded) g_object_unref(loaded);
    if (thumb) g_object_unref(thumb);
    if (srgb) g_object_unref(srgb);
    if (memory) g_object_unref(memory);
    if (small) g_object_unref(small);
    if (flat) g_object_unref(flat);
    return result;
}

int wb_photo_difference_hash(const void *bytes, size_t length, int format, uint64_t *hash) {
    VipsImage *loaded = NULL, *rotated = NULL;
    int result = -1;
    if (load(bytes, length, format, &loaded)) goto done;
    if (vips_autorot(loaded, &rotated, NULL)) goto done;
    result = hash_of(rotated, hash);
done:
    if (result) take_error("the image could not be hashed");
    if (loaded) g_object_unref(loaded);
    if (rotated) g_object_unref(rotated);
    return result;
}

int wb_photo_write_heif(const void *jpeg, size_t length, wb_photo_bytes *heif) {
    VipsImage *loaded = NULL;
    int result = -1;
    if (load(jpeg, length, WB_PHOTO_JPEG, &loaded)) goto done;
    if (vips_heifsave_buffer(loaded, &heif->data, &heif->length, "Q", 60, NULL)) goto done;
    result = 0;
done:
    if (result) take_error("HEIF could not be written");
    if (loaded) g_object_unref(loaded);
    return result;
}

void wb_photo_free_bytes(wb_photo_bytes *bytes) {
    g_free(bytes->data);
    bytes->data = NULL;
    bytes->length = 0;
}
