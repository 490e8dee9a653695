/* Option structs across library versions (include/sleapc/sleapc.h): a
 * struct_size larger than the library's (newer headers) or 0 is refused with
 * SLEAPC_ERR_INVALID_ARG naming the struct; a smaller one (older headers)
 * takes the defaults for the fields it lacks, so a bad value past its end is
 * never read. No data needed: files that do not exist come after the check. */
#include <stddef.h>
#include <string.h>

#include "sleapc/eval.h"
#include "sleapc/render.h"
#include "sleapc/tracking.h"
#include "test_util.h"

#define MISSING "/nonexistent-dir/none.slp"

static void expect_refused(sleapc_status st, const char *what, const char *why)
{
    CHECK_MSG(st == SLEAPC_ERR_INVALID_ARG, "%s: status %d", what, (int)st);
    CHECK_MSG(strstr(sleapc_last_error(), what) && strstr(sleapc_last_error(), why),
              "%s: %s", what, sleapc_last_error());
}

int main(void)
{
    /* Tracking and filter options. */
    sleapc_tracking_opts t = sleapc_tracking_opts_default();
    sleapc_filter_opts f = sleapc_filter_opts_default();
    CHECK(t.struct_size == sizeof t && f.struct_size == sizeof f);
    CHECK_OK(sleapc_tracking_opts_check(&t, &f, 3));
    t.struct_size = sizeof t + 8;
    expect_refused(sleapc_tracking_opts_check(&t, &f, 3), "sleapc_tracking_opts", "larger");
    t.struct_size = 0;
    expect_refused(sleapc_tracking_opts_check(&t, &f, 3), "sleapc_tracking_opts", "_default()");
    t = sleapc_tracking_opts_default();
    f.filter_overlapping = true;
    f.filter_overlapping_method = "no-such-method";
    CHECK(sleapc_tracking_opts_check(&t, &f, 3) == SLEAPC_ERR_INVALID_ARG);
    f.struct_size = (uint32_t)offsetof(sleapc_filter_opts, filter_overlapping_method);
    CHECK_MSG(sleapc_tracking_opts_check(&t, &f, 3) == SLEAPC_OK,
              "an older filter struct read past its end: %s", sleapc_last_error());
    const char *outs[1] = {"/nonexistent-dir/out.slp"};
    f = sleapc_filter_opts_default();
    f.struct_size = sizeof f + 4;
    expect_refused(sleapc_retrack(MISSING, outs, 1, NULL, &f), "sleapc_filter_opts", "larger");

    /* Evaluation options. */
    sleapc_eval_opts e = sleapc_eval_opts_default();
    sleapc_eval *ev = NULL;
    e.struct_size = sizeof e + 8;
    expect_refused(sleapc_eval_run(MISSING, MISSING, &e, &ev), "sleapc_eval_opts", "larger");
    CHECK(ev == NULL);
    e = sleapc_eval_opts_default();
    e.match_method = "no-such-method";
    CHECK(sleapc_eval_run(MISSING, MISSING, &e, &ev) == SLEAPC_ERR_INVALID_ARG);
    e.struct_size = (uint32_t)offsetof(sleapc_eval_opts, match_method);
    CHECK_MSG(sleapc_eval_run(MISSING, MISSING, &e, &ev) == SLEAPC_ERR_IO,
              "an older eval struct read past its end: %s", sleapc_last_error());
    sleapc_eval_destroy(ev);
    sleapc_eval_tracking_opts et = sleapc_eval_tracking_opts_default();
    sleapc_eval_tracking *etr = NULL;
    et.struct_size = 0;
    expect_refused(sleapc_eval_tracking_run(MISSING, MISSING, &et, &etr),
                   "sleapc_eval_tracking_opts", "_default()");

    /* Render options. */
    sleapc_render_opts r = sleapc_render_opts_default();
    CHECK(r.struct_size == sizeof r);
    r.struct_size = sizeof r + 8;
    expect_refused(sleapc_render(MISSING, NULL, "/nonexistent-dir/out.png", NULL, 0, &r),
                   "sleapc_render_opts", "larger");
    return test_finish();
}
