/* The MOT cases of sleapnn-0.3.5/tracking: a case's options as the tracking
 * options sleapc takes (test_mot_reference, test_mot_online). */
#ifndef SLEAPC_TEST_MOT_CASE_H
#define SLEAPC_TEST_MOT_CASE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

#include "pipeline/tracking/tracking_config.h"

/* The case's argv (after --tracking) as tracking options; strings point
 * into options. */
static inline bool mot_case_opts(const cJSON *options, sleapc_tracking_opts *t, const char **kv, int cap)
{
    *t = sleapc__tracking_opts_default();
    t->tracking = true;
    t->mot_params = kv;
    const cJSON *argv = cJSON_GetObjectItem(options, "options");
    const int n = cJSON_GetArraySize(argv);
    for (int i = 0; i < n; i++) {
        const char *a = cJSON_GetArrayItem(argv, i)->valuestring;
        const char *next = i + 1 < n ? cJSON_GetArrayItem(argv, i + 1)->valuestring : NULL;
        if (!strcmp(a, "--tracker") && next) {
            t->tracker = next;
            i++;
        } else if (!strcmp(a, "--mot_param") && next && t->n_mot_params < cap) {
            kv[t->n_mot_params++] = next;
            i++;
        } else if (!strcmp(a, "--link_tracklets")) {
            t->link_tracklets = true;
        } else {
            return false;
        }
    }
    return true;
}

#endif
