// Runtime of the C target's CPython extension (_native.c): the parts that never change per model.
// The C backend splices this file verbatim into templates/c/native.c.j2 (after the model's tables);
// these leading // lines are not copied. It uses the macros and tables the template defines before it
// (N_STATE, N_PARAMS, N_FUNCTIONS, MAX_EXTRA, LANES, struct function, FUNCTIONS, ...).
static PyObject *name_x, *name_u, *name_qddot;
static PyObject *numpy_empty;                   /* numpy.empty */
static PyObject *shape_args[N_FUNCTIONS][2];    /* (shape,) for numpy.empty */
static PyObject *fallback;                      /* _dispatch.call(index, x, second, params) */

/* Copy a list, tuple or 1-D float64 buffer of `size` finite numbers into `out`:
 * 1 on success, 0 when `obj` is anything else (no exception is left set). */
static int read_vector(PyObject *obj, Py_ssize_t size, double *out)
{
    Py_ssize_t k;
    if (PyList_Check(obj) || PyTuple_Check(obj)) {
        const int list = PyList_Check(obj);
        if ((list ? PyList_Size(obj) : PyTuple_Size(obj)) != size) return 0;
        for (k = 0; k < size; ++k) {
            PyObject *item = list ? PyList_GetItem(obj, k) : PyTuple_GetItem(obj, k);
            double value;
            if (PyFloat_Check(item)) value = PyFloat_AsDouble(item);
            else if (PyLong_Check(item)) {
                value = PyLong_AsDouble(item);
                if (value == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
            }
            else return 0;
            if (!isfinite(value)) return 0;
            out[k] = value;
        }
        return 1;
    }
    if (PyObject_CheckBuffer(obj)) {
        Py_buffer view;
        int ok;
        if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
            PyErr_Clear();
            return 0;
        }
        ok = view.ndim == 1 && view.shape[0] == size && view.itemsize == 8 && view.format != NULL
            && (strcmp(view.format, "d") == 0 || strcmp(view.format, "<d") == 0 || strcmp(view.format, "=d") == 0);
        if (ok) {
            memcpy(out, view.buf, (size_t)size * sizeof(double));
            for (k = 0; k < size; ++k) ok = ok && isfinite(out[k]);
        }
        PyBuffer_Release(&view);
        return ok;
    }
    return 0;
}

/* 1 when every value is finite (no exponent of all ones), without a branch per value: one more than an
 * exponent of all ones carries into the sign bit, and the loop (and, or, add) vectorizes. Every call from
 * Python checks its results (a robot's linearized_model: 7 350 values), so GCC on x86-64 Linux also builds
 * it for AVX2, unrolled (2.5 times faster), and the CPU picks the version when the library loads. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v3", "default"), optimize("O3", "unroll-loops")))
#endif
static int all_finite(const double *values, Py_ssize_t count)
{
    unsigned long long bits, bad = 0;
    Py_ssize_t k;
    for (k = 0; k < count; ++k) {
        memcpy(&bits, values + k, sizeof bits);
        bad |= (bits & 0x7ff0000000000000ULL) + 0x0010000000000000ULL;
    }
    return !(bad >> 63);
}

/* A new float64 array for output `k` of function `f`; its buffer in `view` (released by the caller). */
static PyObject *new_array(int f, int k, Py_buffer *view)
{
    PyObject *array = PyObject_CallObject(numpy_empty, shape_args[f][k]);
    if (array != NULL && PyObject_GetBuffer(array, view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
        Py_DECREF(array);
        return NULL;
    }
    return array;
}

/* A loop over states: rows [begin, end) of x (N_STATE per row), v (vstride per row, 0: one
 * vector for all), p (pstride per row); it stops at the first state whose inputs (with
 * check_inputs) or results are not finite or where the C function fails. */
struct job {
    const struct function *fn;
    const double *x, *v, *p;
    Py_ssize_t vstride, pstride, begin, end;
    double *o0, *o1;
    int check_inputs;
    Py_ssize_t failed;  /* first failing row, or -1 */
    int code;           /* its C return code; 0: a non-finite result, -1: a non-finite input */
};

static int use_lanes = 0;  /* the CPU runs the lane kernels (AVX2) */

/* Row k on its own; 0, or -1 after recording the failure in `job`. */
static int run_row(struct job *job, Py_ssize_t k)
{
    const struct function *fn = job->fn;
    const double *x = job->x + k * N_STATE, *v = job->v != NULL ? job->v + k * job->vstride : NULL;
    double *r0 = job->o0 + k * fn->size[0], *r1 = job->o1 != NULL ? job->o1 + k * fn->size[1] : NULL;
    int code;
    if (job->check_inputs && (!all_finite(x, N_STATE) || (v != NULL && !all_finite(v, fn->extra)))) {
        job->failed = k;
        job->code = -1;
        return -1;
    }
    code = fn->call(x, v, job->p + k * job->pstride, r0, r1);
    if (code != 0 || !all_finite(r0, fn->size[0]) || (r1 != NULL && !all_finite(r1, fn->size[1]))) {
        job->failed = k;
        job->code = code;
        return -1;
    }
    return 0;
}

static void run(struct job *job)
{
    const struct function *fn = job->fn;
    Py_ssize_t k = job->begin, i;
    job->failed = -1;
    job->code = 0;
    if (use_lanes && fn->lanes != NULL) {
        for (; k + LANES <= job->end; k += LANES) {
            int flags[LANES];
            fn->lanes(job->x + k * N_STATE, job->v + k * job->vstride, job->vstride, job->p + k * job->pstride, job->pstride,
                      job->o0 + k * fn->size[0], job->o1 != NULL ? job->o1 + k * fn->size[1] : NULL, flags);
            for (i = 0; i < LANES; ++i) {
                const Py_ssize_t row = k + i;
                const double *r0 = job->o0 + row * fn->size[0], *r1 = job->o1 != NULL ? job->o1 + row * fn->size[1] : NULL;
                const int ok = !flags[i] && all_finite(r0, fn->size[0]) && (r1 == NULL || all_finite(r1, fn->size[1]))
                    && (!job->check_inputs || (all_finite(job->x + row * N_STATE, N_STATE) && all_finite(job->v + row * job->vstride, fn->extra)));
                if (!ok && run_row(job, row) != 0) return;
            }
        }
    }
    for (; k < job->end; ++k) {
        if (run_row(job, k) != 0) return;
    }
}

/* Threads for large batches (the C functions are re-entrant; each thread writes its own rows). */
#define MIN_ROWS_PER_THREAD 4096
#define MAX_THREADS 64
static int threads = 1;

#if !defined(_WIN32)
#include <pthread.h>

static void *run_thread(void *job)
{
    run((struct job *)job);
    return NULL;
}
#endif

static void run_all(struct job *job, Py_ssize_t rows)
{
    Py_ssize_t count = threads < MAX_THREADS ? threads : MAX_THREADS, step, t;
    if (count > rows / MIN_ROWS_PER_THREAD) count = rows / MIN_ROWS_PER_THREAD;
    job->begin = 0;
    job->end = rows;
#if !defined(_WIN32)
    if (count > 1) {
        struct job jobs[MAX_THREADS];
        pthread_t ids[MAX_THREADS];
        int started[MAX_THREADS];
        step = (rows + count - 1) / count;
        for (t = 0; t < count; ++t) {
            jobs[t] = *job;
            jobs[t].begin = t * step;
            jobs[t].end = (t + 1) * step < rows ? (t + 1) * step : rows;
            started[t] = t > 0 && pthread_create(&ids[t], NULL, run_thread, &jobs[t]) == 0;
        }
        for (t = 0; t < count; ++t) {
            if (!started[t]) run(&jobs[t]);
        }
        for (t = 1; t < count; ++t) {
            if (started[t]) pthread_join(ids[t], NULL);
        }
        job->failed = -1;
        job->code = 0;
        for (t = 0; t < count; ++t) {
            if (jobs[t].failed >= 0) {
                job->failed = jobs[t].failed;
                job->code = jobs[t].code;
                break;
            }
        }
        return;
    }
#else
    (void)step;
    (void)t;
#endif
    run(job);
}

/* A C-contiguous float64 buffer of `obj` (0, no exception set, when it is not one). */
static int float64_buffer(PyObject *obj, Py_buffer *view, int writable)
{
    if (!PyObject_CheckBuffer(obj)) return 0;
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) != 0) {
        PyErr_Clear();
        return 0;
    }
    if (view->itemsize == 8 && view->format != NULL
        && (strcmp(view->format, "d") == 0 || strcmp(view->format, "<d") == 0 || strcmp(view->format, "=d") == 0)) return 1;
    PyBuffer_Release(view);
    return 0;
}

/* numpy.empty(batch + shape of output k); its buffer in `view`. */
static PyObject *new_batch_array(int f, int k, const Py_buffer *x, Py_buffer *view)
{
    PyObject *shape, *inner = PyTuple_GetItem(shape_args[f][k], 0), *array;
    const Py_ssize_t lead = x->ndim - 1, tail = PyTuple_Size(inner);
    Py_ssize_t d;
    shape = PyTuple_New(lead + tail);
    if (shape == NULL) return NULL;
    for (d = 0; d < lead + tail; ++d) {
        PyObject *size = d < lead ? PyLong_FromSsize_t(x->shape[d]) : PyTuple_GetItem(inner, d - lead);
        if (size == NULL) { Py_DECREF(shape); return NULL; }
        if (d >= lead) Py_INCREF(size);
        PyTuple_SetItem(shape, d, size);
    }
    array = PyObject_CallFunctionObjArgs(numpy_empty, shape, NULL);
    Py_DECREF(shape);
    if (array != NULL && PyObject_GetBuffer(array, view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
        Py_DECREF(array);
        return NULL;
    }
    return array;
}

/* The batch fast path: x a C-contiguous float64 array of shape (..., N_STATE), the second
 * argument one vector or an array with the same leading shape, float parameters. Returns 1
 * with *result set (NULL on error), or 0 when it does not apply or some state fails (the
 * general path then raises the Python target's error). */
static int batch(int f, PyObject **positional, const double *params, PyObject **result)
{
    const struct function *fn = &FUNCTIONS[f];
    Py_buffer bx, bv, b0, b1;
    double single[MAX_EXTRA];
    struct job job;
    PyObject *a = NULL, *b = NULL;
    Py_ssize_t rows = 1, d;
    int have_v = 0, ok;
    if (!float64_buffer(positional[0], &bx, 0)) return 0;
    ok = bx.ndim >= 2 && bx.shape[bx.ndim - 1] == N_STATE;
    job.v = NULL;
    job.vstride = 0;
    if (ok && fn->second != NULL) {
        if (read_vector(positional[1], fn->extra, single)) job.v = single;
        else if (float64_buffer(positional[1], &bv, 0)) {
            have_v = 1;
            ok = bv.ndim == bx.ndim && bv.shape[bv.ndim - 1] == fn->extra;
            for (d = 0; ok && d < bx.ndim - 1; ++d) ok = bv.shape[d] == bx.shape[d];
            job.v = (const double *)bv.buf;
            job.vstride = fn->extra;
        }
        else ok = 0;
    }
    if (!ok) {
        if (have_v) PyBuffer_Release(&bv);
        PyBuffer_Release(&bx);
        return 0;
    }
    for (d = 0; d < bx.ndim - 1; ++d) rows *= bx.shape[d];
    a = new_batch_array(f, 0, &bx, &b0);
    if (a != NULL && fn->outputs == 2) {
        b = new_batch_array(f, 1, &bx, &b1);
        if (b == NULL) { PyBuffer_Release(&b0); Py_CLEAR(a); }
    }
    if (a != NULL) {
        job.fn = fn;
        job.x = (const double *)bx.buf;
        job.p = params;
        job.pstride = 0;
        job.o0 = (double *)b0.buf;
        job.o1 = b != NULL ? (double *)b1.buf : NULL;
        job.check_inputs = 1;
        Py_BEGIN_ALLOW_THREADS
        run_all(&job, rows);
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&b0);
        if (b != NULL) PyBuffer_Release(&b1);
    }
    if (have_v) PyBuffer_Release(&bv);
    PyBuffer_Release(&bx);
    if (a == NULL) { *result = NULL; return 1; }
    if (job.failed >= 0) {
        Py_DECREF(a);
        Py_XDECREF(b);
        return 0;
    }
    if (b == NULL) { *result = a; return 1; }
    *result = PyTuple_Pack(2, a, b);
    Py_DECREF(a);
    Py_DECREF(b);
    return 1;
}

static int same(PyObject *key, PyObject *name)
{
    return key == name || PyUnicode_Compare(key, name) == 0;
}

static PyObject *missing(const char *function, const char *kind, int count, const char *names)
{
    return PyErr_Format(PyExc_TypeError, "%s() missing %d required %s argument%s: %s", function, count, kind, count == 1 ? "" : "s", names);
}

/* The Python-style list 'a', 'a' and 'b', 'a', 'b', and 'c' of `count` names. */
static void name_list(char *buffer, size_t length, const char *const *names, int count)
{
    int k;
    buffer[0] = '\0';
    for (k = 0; k < count; ++k) {
        const char *separator = k == 0 ? "" : (k == count - 1 ? (count == 2 ? " and " : ", and ") : ", ");
        size_t used = strlen(buffer);
        PyOS_snprintf(buffer + used, length - used, "%s'%s'", separator, names[k]);
    }
}
