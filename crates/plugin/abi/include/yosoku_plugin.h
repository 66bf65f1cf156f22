/*
 * yosoku plugin ABI -- the C declaration. Spec of record: docs/plugin-abi.md.
 *
 * A plugin is a shared library exporting one symbol, yosoku_plugin_init. Only C types and the
 * Arrow C stream interface cross the boundary. Libraries are never unloaded.
 *
 * Versions only ever append fields to the structs. YOSOKU_<STRUCT>_SIZE_<N> is the size of a
 * struct in version N: a plugin initialised for version N fills (YosokuPlugin) or reads
 * (YosokuTableSink) only that many bytes, so a plugin built for a newer version serves an older
 * host, and an older plugin a newer host.
 */
#ifndef YOSOKU_PLUGIN_H
#define YOSOKU_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define YOSOKU_ABI_VERSION 2

typedef int32_t YosokuStatus;
#define YOSOKU_OK 0
#define YOSOKU_ERROR 1
#define YOSOKU_VERSION_UNSUPPORTED 2
#define YOSOKU_PANICKED 3
#define YOSOKU_POISONED 4

/* Caller allocates zeroed; on failure the callee sets message and release. The caller copies the
 * message and calls release(error), which frees it and nulls message and release. */
typedef struct YosokuError {
  char* message;
  void (*release)(struct YosokuError* error);
  void* private_data;
} YosokuError;

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
/* From the Arrow C data and C stream interfaces (Apache Arrow, stable ABI). */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};
#endif /* ARROW_C_DATA_INTERFACE */
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};
#endif /* ARROW_C_STREAM_INTERFACE */

/* Owned by the host, valid during one collect call. push moves the stream on YOSOKU_OK (the host
 * copies it and sets stream->release to NULL); on failure the stream stays with the plugin. */
typedef struct YosokuTableSink {
  YosokuStatus (*push)(struct YosokuTableSink* sink, const char* name,
                       struct ArrowArrayStream* stream, YosokuError* error);
  void (*progress)(struct YosokuTableSink* sink, uint64_t done, uint64_t total,
                   const char* message);
  void* private_data;
  /* Version 2. Reports a file the collector read completely: its path as the configuration
   * gave it, its size and its SHA-256 (64 lowercase hex digits), so that the host records it
   * without reading it again. May be NULL. */
  void (*input_read)(struct YosokuTableSink* sink, const char* path, uint64_t size_bytes,
                     const char* sha256_hex);
} YosokuTableSink;

#define YOSOKU_TABLE_SINK_SIZE_1 offsetof(YosokuTableSink, input_read)
#define YOSOKU_TABLE_SINK_SIZE_2 sizeof(YosokuTableSink)

/* Allocated zeroed by the host, filled by yosoku_plugin_init up to the size of the version it
 * was initialised for. Later versions only append fields. */
typedef struct YosokuPlugin {
  uint32_t abi_version;
  void* private_data;
  /* *json_out: the descriptor (docs/plugin-abi.md), owned by the plugin, valid for the process. */
  YosokuStatus (*describe)(struct YosokuPlugin* plugin, const char** json_out, YosokuError* error);
  /* config_json: a JSON object of the collector's declared keys, paths made absolute. */
  YosokuStatus (*collect)(struct YosokuPlugin* plugin, const char* collector,
                          const char* config_json, YosokuTableSink* sink, YosokuError* error);
  /* Version 2. Checks a configuration as collect would, without collecting (values, not only
   * types), so that the host refuses a pipeline before any collector runs. May be NULL. */
  YosokuStatus (*validate)(struct YosokuPlugin* plugin, const char* collector,
                           const char* config_json, YosokuError* error);
} YosokuPlugin;

#define YOSOKU_PLUGIN_SIZE_1 offsetof(YosokuPlugin, validate)
#define YOSOKU_PLUGIN_SIZE_2 sizeof(YosokuPlugin)

/* The one exported symbol. Returns YOSOKU_VERSION_UNSUPPORTED for an ABI version the plugin does
 * not implement; the host then retries with an older version. On YOSOKU_OK, out holds the
 * first YOSOKU_PLUGIN_SIZE_<abi_version> bytes and out->abi_version == abi_version. */
YosokuStatus yosoku_plugin_init(uint32_t abi_version, YosokuPlugin* out, YosokuError* error);

#ifdef __cplusplus
}
#endif

#endif /* YOSOKU_PLUGIN_H */
