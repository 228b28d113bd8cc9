/* SPDX-License-Identifier: MIT */
/*
 * Function tracing: the interpreter's C-level profiling hook (Py_tracefunc) records
 * every Python call, and with c_calls every C call, as a complete event ("X") on its
 * thread (ringtrace.profile and `python -m ringtrace run`, docs/python.md).
 *
 * A call pushes (its frame, its names, the clock) on the thread's stack; its return
 * pops it and records one complete event, so that a minimum duration can drop a short
 * call after the fact and the depth is the stack's. A generator's or coroutine's
 * yield is a return and its resumption a call: each step is a slice. An exception
 * unwinding a frame is a return too. A return that does not match the top of the
 * stack (a frame that began before profiling did) is ignored.
 *
 * The names are made once per code object and kept in its co_extra slot: the slice's
 * name "module.qualname" and the file interned (never freed, the writer reads them by
 * pointer), the first line, and the include/exclude decision under the options of
 * the profile that made it (`generation`). A C function's names are kept in a table
 * keyed by its method definition and its self's type (or module), never freed.
 *
 * Threads: on 3.12+ PyEval_SetProfileAllThreads(), on 3.11 _PyEval_SetProfile() on
 * every thread state; a thread started later runs threading's profile hook first,
 * which is thread_bootstrap() here: it puts the C hook in its place.
 */
#include "pyrtr.h"

#include <frameobject.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define STACK_FRAMES 1024
#define MAX_PREFIXES 64

static const char PY_CAT[] = "python";
static const char C_CAT[] = "python.c";

struct code_info {
	const char *name; /* interned "module.qualname"; NULL: not recordable */
	const char *file; /* interned, NULL for a C function */
	int64_t line;
	unsigned generation; /* the profile whose options decided `recorded` */
	bool recorded;
};

struct frame_entry {
	const void *key; /* the frame, or the C function object */
	const struct code_info *info;
	uint64_t start_ns; /* 0: not recorded */
};

struct stack {
	unsigned generation; /* entries from another profile are dropped */
	unsigned depth;	     /* may pass STACK_FRAMES: those are not kept */
	struct frame_entry e[STACK_FRAMES];
};

/* The options of the running profile; written with the GIL held, read by the hook,
 * which runs with the GIL held. */
static struct {
	bool active;
	bool c_calls;
	unsigned generation;
	uint64_t min_ns;
	unsigned max_depth; /* 0: no limit */
	unsigned n_include, n_exclude;
	char *include[MAX_PREFIXES], *exclude[MAX_PREFIXES];
	uint64_t frames_past_stack; /* calls deeper than STACK_FRAMES, not recorded */
} prof;

static Py_ssize_t code_extra_index = -1;
static PyObject *main_name; /* "__main__", made once */
static pthread_key_t stack_key;
static _Thread_local struct stack *tls_stack;

static void stack_free(void *s)
{
	free(s);
}

static struct stack *thread_stack(void)
{
	struct stack *s = tls_stack;

	if (s == NULL) {
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			return NULL;
		pthread_setspecific(stack_key, s); /* freed when the thread ends */
		tls_stack = s;
	}
	if (s->generation != prof.generation) {
		s->generation = prof.generation;
		s->depth = 0;
	}
	return s;
}

/* ------------------------------------------------------------------------- */
/* Names and decisions                                                        */

/* prefix matches name: equal, or name continues past it with a dot. */
static bool prefix_matches(const char *prefix, const char *name)
{
	size_t n = strlen(prefix);

	return strncmp(prefix, name, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

static bool name_recorded(const char *name)
{
	bool in = prof.n_include == 0;

	for (unsigned i = 0; i < prof.n_include && !in; i++)
		in = prefix_matches(prof.include[i], name);
	for (unsigned i = 0; i < prof.n_exclude && in; i++)
		in = !prefix_matches(prof.exclude[i], name);
	return in;
}

static void decide(struct code_info *info)
{
	if (info->generation != prof.generation) {
		info->recorded = info->name != NULL && name_recorded(info->name);
		info->generation = prof.generation;
	}
}

/* The interned copy of "module.qualname" (module NULL or not a str: qualname). */
static const char *full_name(PyObject *module, PyObject *qualname)
{
	PyObject *s = module != NULL && PyUnicode_Check(module)
			      ? PyUnicode_FromFormat("%U.%U", module, qualname)
			      : Py_NewRef(qualname);
	const char *name = s != NULL ? pyrtr_intern(s, "name") : NULL;

	Py_XDECREF(s);
	return name;
}

static struct code_info *code_info_of(PyCodeObject *code, PyFrameObject *frame)
{
	void *extra = NULL;

	if (_PyCode_GetExtra((PyObject *)code, code_extra_index, &extra) == 0 && extra != NULL)
		return extra;
	struct code_info *info = calloc(1, sizeof(*info));
	if (info == NULL)
		return NULL;
	PyObject *globals = PyFrame_GetGlobals(frame);
	PyObject *module = globals != NULL ? PyDict_GetItemString(globals, "__name__") : NULL;
	/* A spawn or forkserver child runs its parent's main script as __mp_main__ (also
	 * sys.modules["__main__"] there): named as in the parent, for its filters too. */
	if (module != NULL && PyUnicode_Check(module) &&
	    PyUnicode_CompareWithASCIIString(module, "__mp_main__") == 0)
		module = main_name;
	info->name = full_name(module, code->co_qualname);
	info->file = pyrtr_intern(code->co_filename, "file");
	info->line = code->co_firstlineno;
	info->generation = prof.generation - 1; /* decided on first use */
	Py_XDECREF(globals);
	if (info->file == NULL)
		info->name = NULL;
	PyErr_Clear(); /* a name that cannot be interned is not recorded */
	if (_PyCode_SetExtra((PyObject *)code, code_extra_index, info) != 0) {
		PyErr_Clear();
		free(info);
		return NULL;
	}
	return info;
}

/* C functions' names by (method definition, self's type or module). */
static struct {
	struct c_slot {
		const void *ml, *owner;
		struct code_info *info;
	} * slots;
	size_t mask, used;
} c_names;

static size_t c_hash(const void *ml, const void *owner)
{
	uint64_t h = (uint64_t)(uintptr_t)ml * UINT64_C(0x9E3779B97F4A7C15);

	return (size_t)((h ^ (h >> 29) ^ (uint64_t)(uintptr_t)owner) *
			UINT64_C(0xBF58476D1CE4E5B9));
}

static int c_names_grow(void)
{
	size_t n = c_names.mask == 0 ? 256 : (c_names.mask + 1) * 2;
	struct c_slot *slots = calloc(n, sizeof(*slots));

	if (slots == NULL)
		return -1;
	for (size_t i = 0; c_names.mask != 0 && i <= c_names.mask; i++) {
		struct c_slot *o = &c_names.slots[i];
		if (o->info == NULL)
			continue;
		size_t j = c_hash(o->ml, o->owner) & (n - 1);
		while (slots[j].info != NULL)
			j = (j + 1) & (n - 1);
		slots[j] = *o;
	}
	free(c_names.slots);
	c_names.slots = slots;
	c_names.mask = n - 1;
	return 0;
}

static const char *c_function_name(PyCFunctionObject *f)
{
	PyObject *self = f->m_self, *module = f->m_module, *owner = NULL;
	PyObject *method = PyUnicode_FromString(f->m_ml->ml_name);

	if (method == NULL)
		return NULL;
	if (module != NULL && PyUnicode_Check(module))
		owner = Py_NewRef(module);
	else if (self != NULL && PyModule_Check(self))
		owner = PyModule_GetNameObject(self);
	else if (self != NULL)
		owner = PyUnicode_FromString(PyType_Check(self) ? ((PyTypeObject *)self)->tp_name
								: Py_TYPE(self)->tp_name);
	PyErr_Clear();
	const char *name = full_name(owner, method);
	Py_XDECREF(owner);
	Py_DECREF(method);
	return name;
}

static struct code_info *c_info_of(PyObject *func)
{
	PyCFunctionObject *f = (PyCFunctionObject *)func;
	const void *owner =
		f->m_self == NULL || PyModule_Check(f->m_self) || PyType_Check(f->m_self)
			? (const void *)f->m_self
			: (const void *)Py_TYPE(f->m_self);
	size_t i = c_hash(f->m_ml, owner) & c_names.mask;

	for (; c_names.mask != 0 && c_names.slots[i].info != NULL; i = (i + 1) & c_names.mask)
		if (c_names.slots[i].ml == f->m_ml && c_names.slots[i].owner == owner)
			return c_names.slots[i].info;
	if ((c_names.used + 1) * 4 >= (c_names.mask + 1) * 3 && c_names_grow() != 0)
		return NULL;
	struct code_info *info = calloc(1, sizeof(*info));
	if (info == NULL)
		return NULL;
	info->name = c_function_name(f);
	PyErr_Clear();
	info->generation = prof.generation - 1;
	for (i = c_hash(f->m_ml, owner) & c_names.mask; c_names.slots[i].info != NULL;
	     i = (i + 1) & c_names.mask)
		;
	c_names.slots[i] = (struct c_slot){f->m_ml, owner, info};
	c_names.used++;
	return info;
}

/* ------------------------------------------------------------------------- */
/* The hook                                                                   */

static void push(struct stack *s, const void *key, struct code_info *info, const char *cat)
{
	unsigned depth = ++s->depth;

	if (depth > STACK_FRAMES) {
		prof.frames_past_stack++;
		return;
	}
	struct frame_entry *e = &s->e[depth - 1];
	e->key = key;
	e->info = info;
	e->start_ns = 0;
	if (info == NULL)
		return;
	decide(info);
	if (info->recorded && (prof.max_depth == 0 || depth <= prof.max_depth) &&
	    rtr_category_enabled(cat))
		e->start_ns = rtr_now_ns();
}

static void pop(struct stack *s, const void *key, const char *cat)
{
	if (s->depth == 0)
		return;
	if (s->depth > STACK_FRAMES) {
		s->depth--;
		return;
	}
	struct frame_entry *e = &s->e[s->depth - 1];
	if (e->key != key)
		return; /* a frame that began before profiling did */
	s->depth--;
	if (e->start_ns == 0)
		return;
	uint64_t dur = rtr_now_ns() - e->start_ns;
	if (dur < prof.min_ns)
		return;
	const struct code_info *info = e->info;
	if (info->file == NULL) {
		PYRTR_RECORD(1, rtr_complete(cat, info->name, e->start_ns, dur));
		return;
	}
	struct rtr_arg args[2] = {
		{.key = "file", .type = RTR_ARG_TYPE_STR, .v.str = info->file},
		{.key = "line", .type = RTR_ARG_TYPE_I64, .v.i64 = info->line},
	};
	PYRTR_RECORD(3, rtr_complete_args(cat, info->name, e->start_ns, dur, args, 2));
}

static int profile_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	struct stack *s;

	(void)obj;
	if (!prof.active || (s = thread_stack()) == NULL)
		return 0;
	switch (what) {
	case PyTrace_CALL: {
		PyCodeObject *code = PyFrame_GetCode(frame);
		push(s, frame, code_info_of(code, frame), PY_CAT);
		Py_DECREF(code);
		break;
	}
	case PyTrace_RETURN:
		pop(s, frame, PY_CAT);
		break;
	case PyTrace_C_CALL:
		if (prof.c_calls && PyCFunction_Check(arg))
			push(s, arg, c_info_of(arg), C_CAT);
		break;
	case PyTrace_C_RETURN:
	case PyTrace_C_EXCEPTION:
		if (prof.c_calls)
			pop(s, arg, C_CAT);
		break;
	default:
		break;
	}
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Turning it on and off                                                      */

static void set_all_threads(Py_tracefunc hook)
{
#if PY_VERSION_HEX >= 0x030C0000
	PyEval_SetProfileAllThreads(hook, NULL);
#else
	PyThreadState *me = PyThreadState_Get();
	for (PyThreadState *t = PyInterpreterState_ThreadHead(me->interp); t != NULL;
	     t = PyThreadState_Next(t))
		_PyEval_SetProfile(t, hook, NULL);
#endif
}

static void free_prefixes(void)
{
	for (unsigned i = 0; i < prof.n_include; i++)
		free(prof.include[i]);
	for (unsigned i = 0; i < prof.n_exclude; i++)
		free(prof.exclude[i]);
	prof.n_include = prof.n_exclude = 0;
}

/* The strs of the sequence seq as malloc'd copies in out[]; -1 with an exception. */
static int read_prefixes(PyObject *seq, char **out, unsigned *n, const char *what)
{
	PyObject *fast = PySequence_Fast(seq, "include and exclude take a list of str");

	if (fast == NULL)
		return -1;
	Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
	if (len > MAX_PREFIXES) {
		Py_DECREF(fast);
		PyErr_Format(PyExc_ValueError, "%s: at most %d prefixes", what, MAX_PREFIXES);
		return -1;
	}
	for (Py_ssize_t i = 0; i < len; i++) {
		const char *p = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
		if (p == NULL || (out[*n] = strdup(p)) == NULL) {
			Py_DECREF(fast);
			return p == NULL ? -1 : (PyErr_NoMemory(), -1);
		}
		(*n)++;
	}
	Py_DECREF(fast);
	return 0;
}

static PyObject *py_profile_enable(PyObject *m, PyObject *args)
{
	PyObject *include, *exclude;
	unsigned long long min_ns;
	unsigned max_depth;
	int c_calls;

	(void)m;
	if (!PyArg_ParseTuple(args, "OOKIp:_profile_enable", &include, &exclude, &min_ns,
			      &max_depth, &c_calls))
		return NULL;
	if (prof.active) {
		PyErr_SetString(PyExc_RuntimeError, "ringtrace.profile(): already profiling");
		return NULL;
	}
	free_prefixes();
	if (read_prefixes(include, prof.include, &prof.n_include, "include") != 0 ||
	    read_prefixes(exclude, prof.exclude, &prof.n_exclude, "exclude") != 0) {
		free_prefixes();
		return NULL;
	}
	prof.min_ns = min_ns;
	prof.max_depth = max_depth;
	prof.c_calls = c_calls;
	prof.generation++;
	prof.active = true;
	set_all_threads(profile_hook);
	Py_RETURN_NONE;
}

static PyObject *py_profile_disable(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	if (prof.active) {
		prof.active = false;
		set_all_threads(NULL);
	}
	Py_RETURN_NONE;
}

/* _profile_exec(code, globals, include, exclude, min_ns, max_depth, c_calls): run the
 * code (a script's) with profiling on from its first frame, so that the caller's own
 * call of this function is no slice and the script's frames count depth from 1. */
static PyObject *py_profile_exec(PyObject *m, PyObject *args)
{
	PyObject *code, *globals, *options, *done, *result;

	if (PyTuple_GET_SIZE(args) != 7 || !PyCode_Check(PyTuple_GET_ITEM(args, 0)) ||
	    !PyDict_Check(PyTuple_GET_ITEM(args, 1))) {
		PyErr_SetString(PyExc_TypeError,
				"_profile_exec(code, globals, include, exclude, min_ns, max_depth, "
				"c_calls)");
		return NULL;
	}
	code = PyTuple_GET_ITEM(args, 0);
	globals = PyTuple_GET_ITEM(args, 1);
	if ((options = PyTuple_GetSlice(args, 2, 7)) == NULL)
		return NULL;
	done = py_profile_enable(m, options);
	Py_DECREF(options);
	if (done == NULL)
		return NULL;
	Py_DECREF(done);
	result = PyEval_EvalCode(code, globals, globals);
	if (prof.active) { /* an exception stays set through the switch */
		prof.active = false;
		set_all_threads(NULL);
	}
	return result;
}

/* threading.setprofile()'s hook, called once as a new thread's first event: the C
 * hook takes its place, and gets this event. */
static PyObject *py_thread_bootstrap(PyObject *m, PyObject *const *argv, Py_ssize_t n)
{
	(void)m;
	if (!prof.active || n != 3) {
		PyEval_SetProfile(NULL, NULL); /* profiling ended before this thread began */
		Py_RETURN_NONE;
	}
	PyEval_SetProfile(profile_hook, NULL);
	const char *event = PyUnicode_Check(argv[1]) ? PyUnicode_AsUTF8(argv[1]) : NULL;
	if (event != NULL && strcmp(event, "call") == 0 && PyFrame_Check(argv[0]))
		profile_hook(NULL, (PyFrameObject *)argv[0], PyTrace_CALL, Py_None);
	PyErr_Clear();
	Py_RETURN_NONE;
}

/* os._exit while profiling: the calls open on this thread never return; each is
 * recorded as ending now, innermost first, before the file is finished. */
static PyObject *py_profile_end_open(PyObject *m, PyObject *unused)
{
	struct stack *s;

	(void)m;
	(void)unused;
	if (!prof.active || (s = thread_stack()) == NULL)
		Py_RETURN_NONE;
	while (s->depth > STACK_FRAMES)
		s->depth--;
	while (s->depth > 0) {
		const struct frame_entry *top = &s->e[s->depth - 1];
		pop(s, top->key, top->info != NULL && top->info->file == NULL ? C_CAT : PY_CAT);
	}
	Py_RETURN_NONE;
}

/* After fork in the child: the parent's frames on the stack are dropped. */
static PyObject *py_profile_after_fork(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	prof.generation++;
	return PyBool_FromLong(prof.active);
}

static PyObject *py_profile_stats(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return Py_BuildValue("{s:O,s:K}", "active", prof.active ? Py_True : Py_False,
			     "frames_past_stack", (unsigned long long)prof.frames_past_stack);
}

PyMethodDef pyrtr_profile_methods[] = {
	{"_profile_enable", py_profile_enable, METH_VARARGS,
	 "_profile_enable(include, exclude, min_ns, max_depth, c_calls)\n--\n\n"
	 "Put the C profiling hook on every thread (ringtrace.profile does it)."},
	{"_profile_exec", py_profile_exec, METH_VARARGS,
	 "_profile_exec(code, globals, include, exclude, min_ns, max_depth, c_calls)\n--\n\n"
	 "Run code with the hook on from its first frame (python -m ringtrace run)."},
	{"_profile_disable", py_profile_disable, METH_NOARGS,
	 "_profile_disable()\n--\n\nTake the hook off every thread."},
	{"_profile_thread_bootstrap", (PyCFunction)(void (*)(void))py_thread_bootstrap,
	 METH_FASTCALL,
	 "_profile_thread_bootstrap(frame, event, arg)\n--\n\n"
	 "threading.setprofile()'s hook: puts the C hook on the new thread."},
	{"_profile_end_open", py_profile_end_open, METH_NOARGS,
	 "_profile_end_open()\n--\n\nRecord the calls open on this thread as ending now."},
	{"_profile_after_fork", py_profile_after_fork, METH_NOARGS,
	 "_profile_after_fork()\n--\n\nIn a forked child: drop the parent's frames; whether "
	 "profiling is on."},
	{"_profile_stats", py_profile_stats, METH_NOARGS,
	 "_profile_stats()\n--\n\n{'active': bool, 'frames_past_stack': int}."},
	{NULL, NULL, 0, NULL},
};

int pyrtr_profile_init(void)
{
	if (code_extra_index >= 0)
		return 0;
	code_extra_index = _PyEval_RequestCodeExtraIndex(free);
	main_name = PyUnicode_InternFromString("__main__");
	if (main_name == NULL)
		return -1;
	if (code_extra_index < 0 || pthread_key_create(&stack_key, stack_free) != 0) {
		PyErr_SetString(PyExc_RuntimeError, "ringtrace: no code extra slot for profiling");
		return -1;
	}
	return 0;
}
