/* A yosoku plugin written in C against include/yosoku_plugin.h only: proof that the ABI is C.
 *
 * It implements ABI version 1 only, so a host of version 2 negotiates down to it (an older
 * plugin serving a newer host). Collector `refuse` fails with an error message the host must
 * copy and release through the plugin's own release callback; collector `numbers` pushes a real
 * Arrow C stream, built by hand: one batch of struct<name: utf8, value: float64>, whose release
 * callbacks are counted.
 *
 * Compiled with -DYOSOKU_TEST_NEWER_DESCRIPTOR it describes itself as a plugin of a newer yosoku
 * would (fields, a collector kind and a config type this host does not know); with
 * -DYOSOKU_TEST_BAD_DESCRIPTOR, with mistakes the host must name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "yosoku_plugin.h"

static int released = 0;
static int streams_released = 0;

static void release_error(YosokuError* error) {
  free(error->message);
  error->message = NULL;
  error->release = NULL;
  released++;
}

static YosokuStatus fail(YosokuError* error, const char* text) {
  error->message = strdup(text);
  error->release = release_error;
  return YOSOKU_ERROR;
}

#if defined(YOSOKU_TEST_NEWER_DESCRIPTOR)
static const char* DESCRIPTOR =
    "{\"descriptor_version\":7,\"name\":\"c_example\",\"version\":\"1.0.0\","
    "\"description\":\"written in C\",\"homepage\":\"https://example.invalid\","
    "\"collectors\":[{\"name\":\"refuse\",\"kind\":\"importer\",\"description\":\"always fails\","
    "\"config\":[{\"key\":\"why\",\"type\":\"string\",\"required\":true,\"help\":\"reason\","
    "\"secret\":false}],\"tables\":[\"runs\"]},"
    "{\"name\":\"watch\",\"kind\":\"streamer\",\"description\":\"from the future\","
    "\"config\":[{\"key\":\"every\",\"type\":\"duration\",\"required\":true,\"help\":\"period\"}],"
    "\"tables\":[\"runs\"],\"live\":true}]}";
#elif defined(YOSOKU_TEST_BAD_DESCRIPTOR)
static const char* DESCRIPTOR =
    "{\"name\":\"c_example\",\"version\":\"1.0.0\",\"description\":\"written in C\","
    "\"collectors\":[{\"name\":\"refuse\",\"kind\":\"importer\",\"description\":\"d\","
    "\"config\":[{\"key\":\"why\",\"type\":\"string\",\"required\":true,\"help\":\"r\"},"
    "{\"key\":\"why\",\"type\":\"integer\",\"required\":false,\"default\":\"three\",\"help\":\"r\"}],"
    "\"tables\":[\"runs\"]},"
    "{\"name\":\"refuse\",\"kind\":\"importer\",\"description\":\"d\",\"config\":[],"
    "\"tables\":[\"Runs.v2\"]}]}";
#else
static const char* DESCRIPTOR =
    "{\"name\":\"c_example\",\"version\":\"1.0.0\",\"description\":\"written in C\","
    "\"collectors\":[{\"name\":\"refuse\",\"kind\":\"importer\",\"description\":\"always fails\","
    "\"config\":[{\"key\":\"why\",\"type\":\"string\",\"required\":true,\"help\":\"reason\"}],"
    "\"tables\":[\"runs\"]},"
    "{\"name\":\"numbers\",\"kind\":\"importer\",\"description\":\"three named numbers\","
    "\"config\":[],\"tables\":[\"numbers\"]}]}";
#endif

static YosokuStatus describe(YosokuPlugin* plugin, const char** json_out, YosokuError* error) {
  (void)plugin;
  (void)error;
  *json_out = DESCRIPTOR;
  return YOSOKU_OK;
}

/* ---- A stream of one batch: struct<name: utf8 not null, value: float64 not null>. ---- */

static const int32_t NAME_OFFSETS[] = {0, 1, 2, 3};
static const char NAME_DATA[] = "abc";
static const double VALUES[] = {1.5, 2.5, 4.0};

static void release_schema(struct ArrowSchema* schema) {
  for (int64_t i = 0; i < schema->n_children; i++) {
    if (schema->children[i]->release) schema->children[i]->release(schema->children[i]);
    free(schema->children[i]);
  }
  free(schema->children);
  schema->release = NULL;
}

static void release_child_schema(struct ArrowSchema* schema) { schema->release = NULL; }

static void child_schema(struct ArrowSchema* out, const char* format, const char* name) {
  memset(out, 0, sizeof *out);
  out->format = format;
  out->name = name;
  out->release = release_child_schema;
}

static int get_schema(struct ArrowArrayStream* stream, struct ArrowSchema* out) {
  (void)stream;
  memset(out, 0, sizeof *out);
  out->format = "+s";
  out->name = "";
  out->n_children = 2;
  out->children = calloc(2, sizeof(struct ArrowSchema*));
  out->children[0] = malloc(sizeof(struct ArrowSchema));
  out->children[1] = malloc(sizeof(struct ArrowSchema));
  child_schema(out->children[0], "u", "name");
  child_schema(out->children[1], "g", "value");
  out->release = release_schema;
  return 0;
}

static void release_array(struct ArrowArray* array) {
  for (int64_t i = 0; i < array->n_children; i++) {
    if (array->children[i]->release) array->children[i]->release(array->children[i]);
    free(array->children[i]);
  }
  free(array->children);
  free((void*)array->buffers);
  array->release = NULL;
}

static void release_child_array(struct ArrowArray* array) {
  free((void*)array->buffers);
  array->release = NULL;
}

static void child_array(struct ArrowArray* out, int64_t n_buffers, const void* b1, const void* b2) {
  memset(out, 0, sizeof *out);
  out->length = 3;
  out->n_buffers = n_buffers;
  const void** buffers = calloc((size_t)n_buffers, sizeof(void*));
  buffers[0] = NULL; /* no validity bitmap: no nulls */
  buffers[1] = b1;
  if (n_buffers > 2) buffers[2] = b2;
  out->buffers = buffers;
  out->release = release_child_array;
}

static int get_next(struct ArrowArrayStream* stream, struct ArrowArray* out) {
  int* sent = (int*)stream->private_data;
  memset(out, 0, sizeof *out);
  if (*sent) return 0; /* released array: the end of the stream */
  *sent = 1;
  out->length = 3;
  out->n_buffers = 1;
  out->buffers = calloc(1, sizeof(void*));
  out->n_children = 2;
  out->children = calloc(2, sizeof(struct ArrowArray*));
  out->children[0] = malloc(sizeof(struct ArrowArray));
  out->children[1] = malloc(sizeof(struct ArrowArray));
  child_array(out->children[0], 3, NAME_OFFSETS, NAME_DATA);
  child_array(out->children[1], 2, VALUES, NULL);
  out->release = release_array;
  return 0;
}

static const char* get_last_error(struct ArrowArrayStream* stream) {
  (void)stream;
  return NULL;
}

static void release_stream(struct ArrowArrayStream* stream) {
  free(stream->private_data);
  stream->release = NULL;
  streams_released++;
}

static YosokuStatus collect(YosokuPlugin* plugin, const char* collector, const char* config_json,
                            YosokuTableSink* sink, YosokuError* error) {
  (void)plugin;
  if (strcmp(collector, "numbers") == 0) {
    struct ArrowArrayStream stream = {get_schema, get_next, get_last_error, release_stream,
                                      calloc(1, sizeof(int))};
    YosokuError refused = {0};
    if (sink->push(sink, "numbers", &stream, &refused) != YOSOKU_OK) {
      if (refused.release) refused.release(&refused);
      if (stream.release) stream.release(&stream);
      return fail(error, "the host refused the stream");
    }
    /* Moved: the host owns it now and nulled our copy's release. */
    return stream.release == NULL ? YOSOKU_OK : fail(error, "the host did not move the stream");
  }
  char text[512];
  /* Report the releases so far, so the host test can see its releases arrive here. */
  snprintf(text, sizeof text,
           "C collector %s refuses config %s (errors released so far: %d, streams released: %d)",
           collector, config_json, released, streams_released);
  return fail(error, text);
}

YosokuStatus yosoku_plugin_init(uint32_t abi_version, YosokuPlugin* out, YosokuError* error) {
  if (abi_version != 1) {
    fail(error, "the C plugin implements ABI version 1 only");
    return YOSOKU_VERSION_UNSUPPORTED;
  }
  /* Version 1's fields only: YOSOKU_PLUGIN_SIZE_1 bytes. */
  out->abi_version = 1;
  out->private_data = NULL;
  out->describe = describe;
  out->collect = collect;
  return YOSOKU_OK;
}
