/* A yosoku plugin written in C against include/yosoku_plugin.h only: proof that the ABI is C.
 * It implements ABI version 1, describes one collector, and that collector fails with an error
 * message the host must copy and release through the plugin's own release callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "yosoku_plugin.h"

static int released = 0;

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

static const char* DESCRIPTOR =
    "{\"name\":\"c_example\",\"version\":\"1.0.0\",\"description\":\"written in C\","
    "\"collectors\":[{\"name\":\"refuse\",\"kind\":\"importer\",\"description\":\"always fails\","
    "\"config\":[{\"key\":\"why\",\"type\":\"string\",\"required\":true,\"help\":\"reason\"}],"
    "\"tables\":[\"runs\"]}]}";

static YosokuStatus describe(YosokuPlugin* plugin, const char** json_out, YosokuError* error) {
  (void)plugin;
  (void)error;
  *json_out = DESCRIPTOR;
  return YOSOKU_OK;
}

static YosokuStatus collect(YosokuPlugin* plugin, const char* collector, const char* config_json,
                            YosokuTableSink* sink, YosokuError* error) {
  (void)plugin;
  (void)sink;
  char text[512];
  /* Report the releases so far, so the host test can see its releases arrive here. */
  snprintf(text, sizeof text, "C collector %s refuses config %s (errors released so far: %d)",
           collector, config_json, released);
  return fail(error, text);
}

YosokuStatus yosoku_plugin_init(uint32_t abi_version, YosokuPlugin* out, YosokuError* error) {
  if (abi_version != 1) {
    fail(error, "the C plugin implements ABI version 1 only");
    return YOSOKU_VERSION_UNSUPPORTED;
  }
  out->abi_version = 1;
  out->private_data = NULL;
  out->describe = describe;
  out->collect = collect;
  return YOSOKU_OK;
}
