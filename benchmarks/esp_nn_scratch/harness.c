/* Calls ESP-NN's scratch-size functions on shapes read from stdin (our harness; ESP-NN's
 * own source is compiled next to it, not kept here).
 *
 * Built once per ESP-NN function set with -DESP_NN_SET=<n> (0 ansi, 1 generic opt,
 * 2 esp32s3, 3 esp32p4) and linked with that set's .c files; see README.md.
 *
 * Input lines (ints, space separated):
 *   conv    in_w in_h in_c  f_w f_h f_c  out_w out_h out_c  stride_w stride_h  pad_w pad_h
 *   dw      in_w in_h in_c  f_w f_h f_c  out_w out_h out_c  stride_w stride_h  pad_w pad_h  ch_mult
 *   softmax width height
 * Output: one line per input line, the returned int. The data_dims_t / conv_params_t
 * fields are filled as esp-tflite-micro's kernels fill them in Prepare (extra 1 for
 * input / output, 0 for the filter; offsets 0, dilation {0, 0}, activation {-128, 127}).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esp_nn_defs.h"

#if ESP_NN_SET == 0
#define SFX(name) name##_ansi
#elif ESP_NN_SET == 1
#define SFX(name) name##_opt
#elif ESP_NN_SET == 2
#define SFX(name) name##_esp32s3
#elif ESP_NN_SET == 3
#define SFX(name) name##_esp32p4
#else
#error "ESP_NN_SET must be 0..3"
#endif

int SFX(esp_nn_get_conv_scratch_size)(const data_dims_t *input_dims, const data_dims_t *filter_dims,
                                      const data_dims_t *output_dims, const conv_params_t *conv_params);
int SFX(esp_nn_get_depthwise_conv_scratch_size)(const data_dims_t *input_dims,
                                                const data_dims_t *filter_dims,
                                                const data_dims_t *output_dims,
                                                const dw_conv_params_t *conv_params);
int32_t SFX(esp_nn_get_softmax_scratch_size)(const int32_t width, const int32_t height);

/* The compute routines the linked files reference but the scratch-size functions never
 * call: assembly (esp32s3 .S files) or chip-only C files not compiled here. Calling one
 * is a harness bug. */
#define STUB(name) void name(void); void name(void) { fputs("stub called: " #name "\n", stderr); abort(); }
#if ESP_NN_SET == 2
STUB(esp_nn_conv_s8_mult8_1x1_esp32s3)
STUB(esp_nn_conv_s8_filter_aligned_input_padded_esp32s3)
STUB(esp_nn_conv_s8_1x1)
STUB(esp_nn_conv_s8_1x1_scratch_size)
STUB(esp_nn_conv_s8_3x3_can_use)
STUB(esp_nn_conv_s8_3x3_opt)
STUB(esp_nn_dot_s8_aligned_esp32s3)
STUB(esp_nn_dot_s8_unaligned_esp32s3)
STUB(esp_nn_depthwise_conv_s16_mult8_3x3_esp32s3)
STUB(esp_nn_depthwise_conv_s8_mult1_3x3_padded_esp32s3)
STUB(esp_nn_depthwise_conv_s16_mult1_3x3_no_pad_esp32s3)
STUB(esp_nn_depthwise_conv_s16_mult8_esp32s3)
STUB(esp_nn_depthwise_conv_s16_mult4_esp32s3)
STUB(esp_nn_depthwise_conv_s16_mult1_3x3_esp32s3)
STUB(esp_nn_depthwise_conv_s16_mult1_esp32s3)
STUB(esp_nn_s8_to_s16_esp32s3)
STUB(esp_nn_aligned_s8_to_s16_with_offset_esp32s3)
STUB(esp_nn_multiply_by_quantized_mult_esp32s3)
STUB(esp_nn_multiply_by_quantized_mult_ver1_esp32s3)
#endif

static int read_ints(char *line, int *v, int max) {
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\n", &save); tok && n < max; tok = strtok_r(NULL, " \t\n", &save)) {
        v[n++] = (int) strtol(tok, NULL, 10);
    }
    return n;
}

int main(void) {
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        char kind[16] = {0};
        if (sscanf(line, "%15s", kind) != 1) continue;
        int v[16];
        int n = read_ints(line + strlen(kind), v, 16);
        if (!strcmp(kind, "conv") && n == 13) {
            data_dims_t in = {.width = v[0], .height = v[1], .channels = v[2], .extra = 1};
            data_dims_t f = {.width = v[3], .height = v[4], .channels = v[5], .extra = 0};
            data_dims_t out = {.width = v[6], .height = v[7], .channels = v[8], .extra = 1};
            conv_params_t p = {.in_offset = 0, .out_offset = 0, .stride = {v[9], v[10]},
                               .padding = {v[11], v[12]}, .dilation = {0, 0},
                               .activation = {-128, 127}};
            printf("%d\n", SFX(esp_nn_get_conv_scratch_size)(&in, &f, &out, &p));
        } else if (!strcmp(kind, "dw") && n == 14) {
            data_dims_t in = {.width = v[0], .height = v[1], .channels = v[2], .extra = 1};
            data_dims_t f = {.width = v[3], .height = v[4], .channels = v[5], .extra = 0};
            data_dims_t out = {.width = v[6], .height = v[7], .channels = v[8], .extra = 1};
            dw_conv_params_t p = {.in_offset = 0, .out_offset = 0, .ch_mult = v[13],
                                  .stride = {v[9], v[10]}, .padding = {v[11], v[12]},
                                  .dilation = {0, 0}, .activation = {-128, 127}};
            printf("%d\n", SFX(esp_nn_get_depthwise_conv_scratch_size)(&in, &f, &out, &p));
        } else if (!strcmp(kind, "softmax") && n == 2) {
            printf("%d\n", (int) SFX(esp_nn_get_softmax_scratch_size)(v[0], v[1]));
        } else {
            printf("bad line\n");
        }
        fflush(stdout);
    }
    return 0;
}
