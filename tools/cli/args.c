#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sleapc/sleapc.h"

int cli_gui;
int cli_verbose;
int cli_quiet;
static char backends_used[128];

const char *cli_backends_used(void)
{
    return backends_used[0] ? backends_used : "no backend";
}

bool cli_device_parses(const char *d)
{
    if (strcmp(d, "auto") == 0 || strcmp(d, "cpu") == 0 || strcmp(d, "mps") == 0)
        return true;
    const char *rest = strncmp(d, "cuda", 4) == 0 ? d + 4 : strncmp(d, "gpu", 3) == 0 ? d + 3 : NULL;
    if (!rest)
        return false;
    if (*rest == '\0')
        return true;
    if (*rest != ':' || !rest[1] || strlen(rest + 1) > 2)
        return false;
    for (const char *c = rest + 1; *c; c++)
        if (*c < '0' || *c > '9')
            return false;
    return true;
}

/* Remember each backend the library reports building ("backend: NAME"). */
void cli_note_backend(const char *name)
{
    size_t n = strlen(name), len = strlen(backends_used);
    for (const char *p = strstr(backends_used, name); p; p = strstr(p + 1, name))
        if ((p == backends_used || p[-1] == '+') && (p[n] == '\0' || p[n] == '+'))
            return;
    if (len + n + 2 < sizeof backends_used)
        snprintf(backends_used + len, sizeof backends_used - len, "%s%s", len ? "+" : "", name);
}


/* sleap-nn's --gui error line (_emit_gui_error): one JSON object on stdout. */
static void gui_error_line(const char *msg)
{
    fputs("{\"error\": true, \"type\": \"Error\", \"message\": \"", stdout);
    for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c < 0x20)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    }
    fputs("\"}\n", stdout);
    fflush(stdout);
}

int cli_error(const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "sleapc: error: %s\n", msg);
    if (cli_gui)
        gui_error_line(msg);
    return 1;
}

int cli_lib_error(void)
{
    return cli_error("%s", sleapc_last_error());
}

bool cli_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool cli_is_option(const char *arg, const char *name, const char *alias)
{
    if (alias && strcmp(arg, alias) == 0)
        return true;
    if (strncmp(arg, "--", 2) != 0)
        return false;
    size_t n = strlen(name);
    return strncmp(arg + 2, name, n) == 0 && (arg[2 + n] == '\0' || arg[2 + n] == '=');
}

const char *cli_option_value(int argc, char **argv, int *i, const char *name)
{
    const char *eq = strchr(argv[*i], '=');
    if (strncmp(argv[*i], "--", 2) == 0 && eq)
        return eq + 1;
    if (*i + 1 >= argc) {
        cli_error("option --%s needs a value", name);
        return NULL;
    }
    (*i)++;
    return argv[*i];
}

bool cli_parse_size(const char *s, long *h, long *w)
{
    char hb[32];
    const char *x = strchr(s, 'x');
    if (!x || (size_t)(x - s) >= sizeof hb)
        return false;
    memcpy(hb, s, (size_t)(x - s));
    hb[x - s] = '\0';
    return cli_parse_int(hb, 1, 1 << 16, h) && cli_parse_int(x + 1, 1, 1 << 16, w);
}

int cli_conv_method(const char *s, sleapc_conv_method *out)
{
    if (strcmp(s, "direct") == 0)
        *out = SLEAPC_CONV_DIRECT;
    else if (strcmp(s, "winograd") == 0)
        *out = SLEAPC_CONV_WINOGRAD;
    else if (strcmp(s, "auto") == 0)
        *out = SLEAPC_CONV_AUTO;
    else
        return cli_error("--conv: expected direct, winograd or auto, got \"%s\"", s);
    return 0;
}

long cli_round_up(long v, long m)
{
    return m > 1 ? (v + m - 1) / m * m : v;
}

void cli_model_input_size(const sleapc_model *m, long *h, long *w)
{
    double scale = sleapc_model_input_scale(m);
    int mh = 0, mw = 0, crop = sleapc_model_crop_size(m);
    sleapc_model_max_size(m, &mh, &mw);
    sleapc_model_type t = sleapc_model_get_type(m);
    bool crops = t == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE ||
                 t == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN || t == SLEAPC_MODEL_TYPE_EMBEDDING;
    if (crops && crop > 0)
        mh = mw = crop;
    if (mh <= 0 || mw <= 0)
        mh = mw = 512;
    *h = cli_round_up((long)(mh * scale), sleapc_model_max_stride(m));
    *w = cli_round_up((long)(mw * scale), sleapc_model_max_stride(m));
}
