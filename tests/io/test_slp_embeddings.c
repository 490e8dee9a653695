/* Re-ID embedding vectors in results and in .slp (SLP format 2.5,
 * sleap-io 0.9.5's /embeddings group): the reference run of sleap-nn 0.3.5
 * --save_embeddings slp reads back as its expected.json; vectors written
 * read back bit for bit (whole and in blocks, and through a spill), only
 * instances with a vector get a row, owner_id is the /instances row; a
 * malformed group is an error naming the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/results_spill.h"
#include "io/h5/h5_file.h"
#include "io/predictions/predictions_format.h"
#include "io/slp/slp_read_embeddings.h"
#include "slp_fixture.h"
#include "test_util.h"

#define CASE SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families/cases/embedding__topdown_slp"

enum { D = 8, N_INST = 6 };

/* The reference's vectors, frame by frame, as expected.json lists them. */
static void test_reference(void)
{
    size_t n = 0;
    unsigned char *text = test_read_file(CASE "/expected.json", &n);
    CHECK(text != NULL);
    cJSON *j = text ? cJSON_ParseWithLength((const char *)text, n) : NULL;
    free(text);
    CHECK(j != NULL);
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(CASE "/pred.slp", &pr, NULL));
    CHECK(pr.emb_dim == 16 && pr.n_insts == 40);
    const cJSON *frames = cJSON_GetObjectItem(j, "frames");
    int64_t compared = 0;
    for (int64_t k = 0; j && k < pr.n_frames; k++) {
        const sleapc_pred_frame *f = &pr.frames[k];
        const cJSON *ef = NULL, *it;
        cJSON_ArrayForEach(it, frames)
        {
            if (cJSON_GetObjectItem(it, "frame_idx")->valuedouble == (double)f->frame_idx)
                ef = it;
        }
        const cJSON *insts = ef ? cJSON_GetObjectItem(ef, "instances") : NULL;
        CHECK_MSG(insts && cJSON_GetArraySize(insts) == f->n, "frame %lld",
                  (long long)f->frame_idx);
        for (int64_t i = 0; insts && i < f->n && i < cJSON_GetArraySize(insts); i++) {
            const cJSON *ei = cJSON_GetArrayItem(insts, (int)i);
            const cJSON *v = cJSON_GetObjectItem(ei, "vector");
            CHECK(cJSON_GetArraySize(v) == pr.emb_dim);
            CHECK(pr.insts[f->first + i].score ==
                  (float)cJSON_GetObjectItem(ei, "score")->valuedouble);
            const float *row = pr.embeddings + (f->first + i) * pr.emb_dim;
            for (int d = 0; d < pr.emb_dim && d < cJSON_GetArraySize(v); d++)
                CHECK_MSG(row[d] == (float)cJSON_GetArrayItem(v, d)->valuedouble,
                          "frame %lld instance %lld [%d]", (long long)f->frame_idx, (long long)i,
                          d);
            compared++;
        }
    }
    CHECK(compared == 40);
    cJSON_Delete(j);
    sleapc__predictions_free(&pr);
}

/* 3 frames, 6 instances of which 1 and 4 have no vector. */
static void make(sleapc_predictions *pr)
{
    static const char *const nodes[] = {"head", "tail"};
    static const int edges[][2] = {{0, 1}};
    fixture_init(pr, "Skeleton-0", 2, nodes, 1, edges, 0, NULL, "video.mp4", 3, N_INST);
    CHECK_OK(sleapc__results_set_emb_dim(pr, D));
    for (int i = 0; i < N_INST; i++) {
        if (i % 2 == 0)
            fixture_add_frame(pr, 0, i);
        const float xy[4] = {(float)i, 1.5f, 2.25f, (float)(3 * i)};
        const float sc[2] = {0.5f, 0.75f};
        fixture_add_instance(pr, xy, sc, 0.9f, -1, NAN);
        for (int d = 0; d < D && i != 1 && i != 4; d++)
            pr->embeddings[i * D + d] = (float)sin(0.37 * (i * D + d + 1)) / 3.0f;
    }
}

static void check_same(const sleapc_predictions *a, const sleapc_predictions *b, const char *what)
{
    CHECK_MSG(a->emb_dim == b->emb_dim && a->n_insts == b->n_insts, "%s", what);
    if (a->emb_dim != b->emb_dim || a->n_insts != b->n_insts || !a->embeddings || !b->embeddings)
        return;
    for (int64_t i = 0; i < a->n_insts * a->emb_dim; i++) {
        const float x = a->embeddings[i], y = b->embeddings[i];
        CHECK_MSG(isnan(x) ? isnan(y) : memcmp(&x, &y, sizeof x) == 0, "%s: [%lld]", what,
                  (long long)i);
    }
}

static void test_round_trip(void)
{
    sleapc_predictions pr, back, blk;
    make(&pr);
    const char *path = test_tmp_path("emb.slp");
    CHECK_OK(sleapc__predictions_write_path(&pr, path));

    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_open(path, &f));
    double format_id = 0;
    CHECK_OK(sleapc__h5_attr_double(f, "metadata", "format_id", &format_id));
    CHECK(format_id == 2.5);
    sleapc_h5_info vi = {0}, ii = {0};
    int64_t *id = NULL;
    uint8_t *type = NULL;
    CHECK_OK(sleapc__h5_dataset_info(f, "embeddings/vectors", &vi));
    CHECK(vi.ndim == 2 && vi.shape[0] == 4 && vi.shape[1] == D && vi.maxshape[0] == -1 &&
          vi.maxshape[1] == D && vi.chunk[0] == 4 && vi.chunk[1] == D && vi.gzip == 4);
    CHECK_OK(sleapc__h5_read(f, "embeddings/owner_id", SLEAPC_H5_I64, (void **)&id, NULL));
    CHECK_OK(sleapc__h5_dataset_info(f, "embeddings/owner_id", &ii));
    CHECK(ii.n_elems == 4 && ii.maxshape[0] == -1 && ii.gzip == 4);
    CHECK_OK(sleapc__h5_read(f, "embeddings/owner_type", SLEAPC_H5_U8, (void **)&type, NULL));
    static const int64_t want[] = {0, 2, 3, 5};
    for (int i = 0; id && type && i < 4; i++)
        CHECK(id[i] == want[i] && type[i] == 0);
    sleapc__free(id);
    sleapc__free(type);
    sleapc__h5_close(f);

    CHECK_OK(sleapc__predictions_read(path, &back, NULL));
    check_same(&pr, &back, "whole read");
    sleapc__predictions_free(&back);

    /* In blocks of one frame, gathered. */
    sleapc_predictions_reader r;
    CHECK_OK(sleapc__predictions_open_blocks(path, 1, &r));
    CHECK(r.pr.emb_dim == D);
    back = sleapc__results_header(&r.pr);
    CHECK_OK(sleapc__results_gather(&r.src, &back));
    check_same(&pr, &back, "blocks");
    sleapc__free(back.frames);
    sleapc__free(back.insts);
    sleapc__free(back.points);
    sleapc__free(back.point_scores);
    sleapc__free(back.boxes);
    sleapc__free(back.embeddings);

    /* Through a spill and the memory source's gather. */
    sleapc_results_spill *s = NULL;
    CHECK_OK(sleapc__spill_open(path, pr.n_nodes, &s));
    CHECK_OK(sleapc__spill_append(s, &pr));
    sleapc_results_source src;
    sleapc__spill_source(s, &r.pr, &src);
    blk = sleapc__results_header(&r.pr);
    blk.emb_dim = 0; /* the spill's rows give it */
    CHECK_OK(sleapc__results_gather(&src, &blk));
    check_same(&pr, &blk, "spill");
    sleapc__free(blk.frames);
    sleapc__free(blk.insts);
    sleapc__free(blk.points);
    sleapc__free(blk.point_scores);
    sleapc__free(blk.boxes);
    sleapc__free(blk.embeddings);
    sleapc__spill_close(s);
    sleapc__predictions_reader_close(&r);
    fixture_free(&pr);

    /* No vectors, no group. */
    make(&pr);
    CHECK_OK(sleapc__results_set_emb_dim(&pr, 0));
    const char *none = test_tmp_path("emb_none.slp");
    CHECK_OK(sleapc__predictions_write_path(&pr, none));
    CHECK_OK(sleapc__h5_open(none, &f));
    CHECK(f && !sleapc__h5_is_group(f, "embeddings"));
    sleapc__h5_close(f);
    fixture_free(&pr);
}

/* A group with the given datasets; the reader must refuse it naming path. */
static void bad_group(const char *name, int64_t rows, int64_t dim, int64_t n_type, int64_t n_id,
                      int64_t bad_id)
{
    const char *path = test_tmp_path(name);
    sleapc_h5 *f = NULL;
    CHECK_OK(sleapc__h5_create(path, &f));
    if (!f)
        return;
    float vec[64] = {0};
    uint8_t type[8] = {0};
    int64_t id[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    id[0] = bad_id;
    const int64_t vs[2] = {rows, dim};
    CHECK_OK(sleapc__h5_create_group(f, "embeddings"));
    CHECK_OK(sleapc__h5_write(f, "embeddings/vectors", SLEAPC_H5_F32, dim ? 2 : 1, vs, vec, NULL));
    CHECK_OK(sleapc__h5_write(f, "embeddings/owner_type", SLEAPC_H5_U8, 1, &n_type, type, NULL));
    CHECK_OK(sleapc__h5_write(f, "embeddings/owner_id", SLEAPC_H5_I64, 1, &n_id, id, NULL));
    CHECK_OK(sleapc__h5_close(f));
    CHECK_OK(sleapc__h5_open(path, &f));
    sleapc_slp_embeddings e;
    sleapc_status st = sleapc__slp_embeddings_read(f, path, 4, &e);
    CHECK_MSG(st == SLEAPC_ERR_FORMAT, "%s: status %d", name, (int)st);
    CHECK_MSG(strstr(sleapc__last_error(), path) != NULL, "%s: message '%s'", name,
              sleapc__last_error());
    sleapc__slp_embeddings_free(&e);
    sleapc__h5_close(f);
}

static void test_malformed(void)
{
    bad_group("emb_1d.h5", 4, 0, 4, 4, 0);       /* vectors not 2-D */
    bad_group("emb_type_len.h5", 4, 8, 3, 4, 0); /* owner_type of another length */
    bad_group("emb_id_len.h5", 4, 8, 4, 5, 0);   /* owner_id of another length */
    bad_group("emb_id_range.h5", 4, 8, 4, 4, 4); /* owner_id past /instances */
    bad_group("emb_id_neg.h5", 4, 8, 4, 4, -1);  /* a negative owner_id */
}

int main(void)
{
    test_reference();
    test_round_trip();
    test_malformed();
    return test_finish();
}
