/* SPDX-License-Identifier: MIT */
/*
 * ringtrace.hpp — the C++ API over <ringtrace.h>. C++17 and C++20 (it needs
 * std::string_view); tested with GCC and Clang under -Wall -Wextra -Wpedantic
 * -Wold-style-cast -Werror.
 *
 *	ringtrace::Session session;                      rtr_start(), rtr_stop() at scope end
 *	RINGTRACE_SCOPE("solver", "step", "i", i, "dt", dt);   a slice with typed arguments
 *	ringtrace::Scope s("io", std::string_view(path));      a runtime name, copied
 *	ringtrace::instant("app", "tick", ringtrace::arg("n", n));
 *
 * Literal-only strings. Categories, names given as `literal`, and argument keys
 * are kept by pointer: the writer reads them later, on its own thread. They are
 * checked at compile time where the language allows it:
 *  - the macros paste "" before each of them (`"" name`), so anything but a string
 *    literal (a `const char *`, s.c_str()) is a compile error, in every standard;
 *  - `ringtrace::literal` has no constructor from `const char *`; it is made from a
 *    const char array, and in C++20 that constructor is consteval, so only a literal
 *    or an array of static storage passes (a local array is not a constant
 *    expression). In C++17 a local `const char[]` would pass: use the macros, or
 *    the `_rt` literal suffix ("step"_rt), which only a literal can call.
 * Runtime strings go through the overloads that take std::string_view or
 * std::string and copy the bytes into the ring (the C `_copy` calls, RTR_ARG_STR_COPY).
 * A `const char *` name is refused rather than guessed: say std::string_view(p).
 *
 * Arguments, `ringtrace::arg(key, value)` or key, value pairs in the macros:
 * bool, signed and unsigned integers (and enums, by their underlying type),
 * floating point, string literals (the pointer is kept), and copied strings
 * (std::string_view, std::string, a `const char *`). Each argument is evaluated
 * exactly once, as for a function call, whether or not the recorder runs; nothing
 * is built from them unless the event is recorded (ringtrace::enabled(cat) guards
 * arguments that are costly to compute). An `arg` refers to its value until the end
 * of the full expression: use it inside the call, like std::initializer_list.
 *
 * Scopes. RINGTRACE_SCOPE(cat, name) is the C RTR_SCOPE: a static call site, one
 * record at the end. With arguments it records a B with them where it begins and an E
 * where it ends: the arguments are copied when they are valid (a std::string_view may
 * die before the scope does), the two records cost a tick read each and no extra
 * clock call, slices nest however scopes and rtr_begin()/rtr_end() interleave (the
 * library keeps B/E balanced under drops), and the writer folds a leaf B+E into one X
 * line. A scope with a copied name records one X when it ends (rtr_complete_copy, the
 * name copied into the scope), since no E can name a copied B yet (see Hooks).
 * Stopped, every scope costs a load and a branch at its start and a test of a
 * local at its end, like the C RTR_SCOPE.
 *
 * Thread safety: as the C calls. Every function here is noexcept; none throws, the
 * copies of runtime strings longer than 256 bytes allocate (and are left out when
 * that fails).
 *
 * Hooks for calls the C API may gain (issue 11, part 6): when <ringtrace.h> defines
 * RTR_HAVE_CATEGORY_ENABLED (rtr_category_enabled), ringtrace::enabled() calls it;
 * RTR_HAVE_POP (rtr_pop), a copied-name Scope becomes rtr_begin_copy + rtr_pop and
 * copies nothing itself; RTR_HAVE_END_COPY, ringtrace::end(cat, std::string_view);
 * RTR_HAVE_SCOPE_ARGS (rtr_scope_arg_i64/_f64/_str_copy), Scope::add(key, value).
 *
 * With RINGTRACE_DISABLE every call here compiles to nothing and evaluates none of its
 * arguments (the macros), or does nothing (the functions and classes, all inline).
 */
#ifndef RINGTRACE_HPP
#define RINGTRACE_HPP

#include <ringtrace.h>

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "ringtrace.hpp needs C++17 or later"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#if defined(__cpp_consteval) && __cpp_consteval >= 201811L
#define RINGTRACE__CONSTEVAL consteval
#else
#define RINGTRACE__CONSTEVAL constexpr
#endif

namespace ringtrace
{

/* A string that outlives the recorder: a string literal (see the top of the file). */
class literal
{
      public:
	template <std::size_t N> RINGTRACE__CONSTEVAL literal(const char (&s)[N]) noexcept : p_(s)
	{
	}
	constexpr const char *c_str() const noexcept
	{
		return p_;
	}
	/* For code that has checked s already (the _rt suffix): no check. */
	static constexpr literal unchecked(const char *s) noexcept
	{
		return literal(s, 0);
	}

      private:
	constexpr literal(const char *s, int) noexcept : p_(s)
	{
	}
	const char *p_;
};

/* "name"_rt: a literal in any standard; only a string literal can call it. */
inline namespace literals
{
constexpr literal operator""_rt(const char *s, std::size_t) noexcept
{
	return literal::unchecked(s);
}
} // namespace literals

namespace detail
{
/* Whether S is a runtime string to copy: views into text, not pointers or arrays
 * (which convert to const char *, and are refused or taken as literals). */
template <class S>
constexpr bool is_copied_string = std::is_convertible_v<const S &, std::string_view> &&
				  !std::is_convertible_v<const S &, const char *>;
template <class S> using if_copied = std::enable_if_t<is_copied_string<S>, int>;
} // namespace detail

/* One typed argument: a literal key and a value (see the top of the file). */
class arg
{
      public:
	arg(literal key, bool v) noexcept : key_(key.c_str()), type_(RTR_ARG_TYPE_BOOL)
	{
		v_.b = v;
	}
	template <class T,
		  std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
	arg(literal key, T v) noexcept : key_(key.c_str())
	{
		if constexpr (std::is_signed_v<T>) {
			type_ = RTR_ARG_TYPE_I64;
			v_.i = static_cast<int64_t>(v);
		} else {
			type_ = RTR_ARG_TYPE_U64;
			v_.u = static_cast<uint64_t>(v);
		}
	}
	template <class T, std::enable_if_t<std::is_enum_v<T>, int> = 0>
	arg(literal key, T v) noexcept : arg(key, static_cast<std::underlying_type_t<T>>(v))
	{
	}
	template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
	arg(literal key, T v) noexcept : key_(key.c_str()), type_(RTR_ARG_TYPE_F64)
	{
		v_.f = static_cast<double>(v);
	}
	/* A string literal: its pointer is kept. */
	template <std::size_t N>
	arg(literal key, const char (&v)[N]) noexcept : key_(key.c_str()), type_(RTR_ARG_TYPE_STR)
	{
		v_.s = v;
	}
	arg(literal key, literal v) noexcept : key_(key.c_str()), type_(RTR_ARG_TYPE_STR)
	{
		v_.s = v.c_str();
	}
	/* A C string (NUL-terminated, or nullptr): copied when recorded. A template, so
	 * that a string literal goes to the overload above. */
	template <class P,
		  std::enable_if_t<std::is_same_v<P, const char *> || std::is_same_v<P, char *>,
				   int> = 0>
	arg(literal key, P v) noexcept : key_(key.c_str()), type_(RTR_ARG_TYPE_STR_COPY)
	{
		v_.s = v;
	}
	arg(literal key, const std::string &v) noexcept
	    : key_(key.c_str()), type_(RTR_ARG_TYPE_STR_COPY)
	{
		v_.s = v.c_str();
	}
	/* Any other text: copied when recorded. */
	template <class S, detail::if_copied<S> = 0,
		  std::enable_if_t<!std::is_same_v<S, std::string>, int> = 0>
	arg(literal key, const S &v) noexcept : key_(key.c_str()), type_(kView)
	{
		std::string_view sv(v);
		v_.sv.p = sv.data();
		v_.sv.n = sv.size();
	}

      private:
	friend struct detail_access;
	static constexpr int kView = -1; /* a std::string_view to copy with a NUL */
	const char *key_;
	int type_ = 0;
	union {
		int64_t i;
		uint64_t u;
		double f;
		bool b;
		const char *s;
		struct {
			const char *p;
			std::size_t n;
		} sv;
	} v_ = {};
};

#ifndef RINGTRACE_DISABLE

/* The C struct of each argument, with the copied views NUL-terminated in a buffer
 * that lives as long as this object. */
struct detail_access {
	template <std::size_t N> class packed
	{
	      public:
		explicit packed(const arg *in) noexcept
		{
			std::size_t need = 0;
			for (std::size_t i = 0; i < N; i++)
				if (in[i].type_ == arg::kView)
					need += clip(in[i].v_.sv.n) + 1;
			char *buf = small_;
			if (need > sizeof(small_))
				buf = big_ = new (std::nothrow) char[need];
			for (std::size_t i = 0; i < N; i++) {
				rtr_arg &o = out_[i];
				o = rtr_arg();
				o.key = in[i].key_;
				o.type = in[i].type_;
				switch (in[i].type_) {
				case RTR_ARG_TYPE_BOOL:
					o.v.b = in[i].v_.b;
					break;
				case RTR_ARG_TYPE_I64:
					o.v.i64 = in[i].v_.i;
					break;
				case RTR_ARG_TYPE_U64:
					o.v.u64 = in[i].v_.u;
					break;
				case RTR_ARG_TYPE_F64:
					o.v.f64 = in[i].v_.f;
					break;
				case arg::kView:
					o.type = RTR_ARG_TYPE_STR_COPY;
					o.v.str = nullptr; /* no memory for the copy: left out */
					if (buf != nullptr) {
						std::size_t n = clip(in[i].v_.sv.n);
						std::memcpy(buf, in[i].v_.sv.p, n);
						buf[n] = '\0';
						o.v.str = buf;
						buf += n + 1;
					}
					break;
				default:
					o.v.str = in[i].v_.s;
					break;
				}
			}
		}
		~packed()
		{
			delete[] big_;
		}
		packed(const packed &) = delete;
		packed &operator=(const packed &) = delete;
		const rtr_arg *data() const noexcept
		{
			return out_;
		}
		static constexpr unsigned size() noexcept
		{
			return static_cast<unsigned>(N);
		}

	      private:
		static std::size_t clip(std::size_t n) noexcept
		{
			return n < RTR_MAX_COPY ? n : RTR_MAX_COPY; /* the library cuts there too */
		}
		rtr_arg out_[N];
		char small_[256];
		char *big_ = nullptr;
	};
};

namespace detail
{
template <std::size_t N> using packed = detail_access::packed<N>;

/* A NUL-terminated copy of a view, for the C _copy calls (which copy it again). */
class cstr
{
      public:
	explicit cstr(std::string_view s) noexcept
	{
		std::size_t n = s.size() < RTR_MAX_COPY ? s.size() : RTR_MAX_COPY;
		p_ = n < sizeof(small_) ? small_ : (big_ = new (std::nothrow) char[n + 1]);
		if (p_ != nullptr) {
			std::memcpy(p_, s.data(), n);
			p_[n] = '\0';
		}
	}
	~cstr()
	{
		delete[] big_;
	}
	cstr(const cstr &) = delete;
	cstr &operator=(const cstr &) = delete;
	const char *get() const noexcept
	{
		return p_; /* nullptr when the copy could not be made */
	}
	char *release() noexcept
	{
		char *p = big_;
		big_ = nullptr;
		return p;
	}

      private:
	char *p_;
	char small_[128];
	char *big_ = nullptr;
};

/* A heap copy owned by a Scope (a copied name it records when it ends). */
inline char *dup(std::string_view s) noexcept
{
	std::size_t n = s.size() < RTR_MAX_COPY ? s.size() : RTR_MAX_COPY;
	char *p = new (std::nothrow) char[n + 1];
	if (p != nullptr) {
		std::memcpy(p, s.data(), n);
		p[n] = '\0';
	}
	return p;
}
} // namespace detail

/* Whether an event of category cat would be recorded now: guard costly arguments.
 * Stopped: a load and a branch. */
inline bool enabled(literal cat) noexcept
{
#if defined(RTR_HAVE_CATEGORY_ENABLED)
	return rtr_category_enabled(cat.c_str());
#else
	return rtr__recording_cat(cat.c_str());
#endif
}

/* ------------------------------------------------------------------------- */
/* Scopes                                                                     */

/*
 * A slice from construction to destruction on the calling thread: B/E with literal
 * names (and arguments), one X with a copied name. Not copyable or movable (C++17's
 * guaranteed elision lets `auto s = Scope(...)` compile); destroy it on the thread
 * that made it, in reverse order of construction (automatic storage does that).
 */
class Scope
{
      public:
	Scope(literal cat, literal name) noexcept
	{
		if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
			rtr_begin(cat.c_str(), name.c_str());
			cat_ = cat.c_str();
			name_ = name.c_str();
		}
	}
	template <class... A>
	Scope(literal cat, literal name, const arg &first, const A &...rest) noexcept
	{
		if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
			const arg a[] = {first, rest...};
			detail::packed<1 + sizeof...(A)> p(a);
			rtr_begin_args(cat.c_str(), name.c_str(), p.data(), p.size());
			cat_ = cat.c_str();
			name_ = name.c_str();
		}
	}
	/* A runtime name (std::string_view, std::string), copied. */
	template <class S, detail::if_copied<S> = 0> Scope(literal cat, const S &name) noexcept
	{
		if (RTR__LIKELY(rtr__recording_cat(cat.c_str())))
			begin_copy(cat.c_str(), std::string_view(name));
	}
	~Scope()
	{
		if (RTR__UNLIKELY(cat_ != nullptr))
			finish();
	}
	Scope(const Scope &) = delete;
	Scope &operator=(const Scope &) = delete;

#if defined(RTR_HAVE_SCOPE_ARGS)
	/* An argument added to this slice before it ends, written on its E or X. */
	void add(literal key, int64_t v) noexcept
	{
		if (cat_ != nullptr)
			rtr_scope_arg_i64(cat_, key.c_str(), v);
	}
	void add(literal key, double v) noexcept
	{
		if (cat_ != nullptr)
			rtr_scope_arg_f64(cat_, key.c_str(), v);
	}
	void add(literal key, std::string_view v) noexcept
	{
		detail::cstr s(v);
		if (cat_ != nullptr && s.get() != nullptr)
			rtr_scope_arg_str_copy(cat_, key.c_str(), s.get());
	}
#endif

      private:
	void begin_copy(const char *cat, std::string_view name) noexcept
	{
#if defined(RTR_HAVE_POP)
		detail::cstr s(name);
		if (s.get() == nullptr)
			return;
		rtr_begin_copy(cat, s.get());
		cat_ = cat;
		pop_ = true;
#else
		copy_ = detail::dup(name);
		if (copy_ == nullptr)
			return;
		cat_ = cat;
		name_ = copy_;
		t0_ = rtr_now_ns();
#endif
	}
	void finish() noexcept
	{
		if (copy_ != nullptr) {
			rtr_complete_copy(cat_, copy_, t0_, rtr_now_ns() - t0_);
			delete[] copy_;
			return;
		}
#if defined(RTR_HAVE_POP)
		if (pop_) {
			rtr_pop(cat_);
			return;
		}
#endif
		rtr_end(cat_, name_);
	}

	const char *cat_ = nullptr; /* nullptr: nothing began, nothing to end */
	const char *name_ = nullptr;
	char *copy_ = nullptr; /* owned copied name: an X at the end */
	uint64_t t0_ = 0;
#if defined(RTR_HAVE_POP)
	bool pop_ = false;
#endif
};

namespace detail
{
/* RINGTRACE_SCOPE's object: the C RTR_SCOPE's static call site, and its record. */
class site_scope
{
      public:
	site_scope(const rtr_site *site, int *decision) noexcept
	    : s_(rtr__scope_begin(site, decision))
	{
	}
	/* With arguments: a B carrying them now, its E at the end. */
	template <class... A>
	site_scope(const rtr_site *site, int *decision, const arg &first, const A &...rest) noexcept
	    : s_{nullptr, 0}
	{
		int state = rtr__recording();

		if (RTR__LIKELY(state == 0))
			return;
		if (RTR__UNLIKELY(state & RTR__STATE_FILTERED) &&
		    !rtr__site_cached(state, site, decision))
			return;
		const arg a[] = {first, rest...};
		packed<1 + sizeof...(A)> p(a);
		rtr_begin_args(site->cat, site->name, p.data(), p.size());
		end_ = site;
	}
	~site_scope()
	{
		if (RTR__UNLIKELY(end_ != nullptr))
			rtr_end(end_->cat, end_->name);
		else
			rtr__scope_end(&s_);
	}
	site_scope(const site_scope &) = delete;
	site_scope &operator=(const site_scope &) = delete;

      private:
	rtr__scope s_;
	const rtr_site *end_ = nullptr; /* the site whose E is owed */
};
} // namespace detail

/* ------------------------------------------------------------------------- */
/* Events                                                                     */

/* Slices by hand: begin() and end() with the same literal cat and name. */
inline void begin(literal cat, literal name) noexcept
{
	rtr_begin(cat.c_str(), name.c_str());
}
template <class... A>
inline void begin(literal cat, literal name, const arg &first, const A &...rest) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		const arg a[] = {first, rest...};
		detail::packed<1 + sizeof...(A)> p(a);
		rtr_begin_args(cat.c_str(), name.c_str(), p.data(), p.size());
	}
}
/* A runtime name, copied (rtr_begin_copy). Until the C API can end it by a copied
 * name (rtr_end_copy), prefer a Scope, which ends what it began. */
template <class S, detail::if_copied<S> = 0> inline void begin(literal cat, const S &name) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		detail::cstr s{std::string_view(name)};
		if (s.get() != nullptr)
			rtr_begin_copy(cat.c_str(), s.get());
	}
}
inline void end(literal cat, literal name) noexcept
{
	rtr_end(cat.c_str(), name.c_str());
}
#if defined(RTR_HAVE_END_COPY)
template <class S, detail::if_copied<S> = 0> inline void end(literal cat, const S &name) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		detail::cstr s{std::string_view(name)};
		if (s.get() != nullptr)
			rtr_end_copy(cat.c_str(), s.get());
	}
}
#endif

/* Instants on the calling thread. */
inline void instant(literal cat, literal name) noexcept
{
	rtr_instant(cat.c_str(), name.c_str());
}
template <class... A>
inline void instant(literal cat, literal name, const arg &first, const A &...rest) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		const arg a[] = {first, rest...};
		detail::packed<1 + sizeof...(A)> p(a);
		rtr_instant_args(cat.c_str(), name.c_str(), p.data(), p.size());
	}
}
template <class S, detail::if_copied<S> = 0>
inline void instant(literal cat, const S &name) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		detail::cstr s{std::string_view(name)};
		if (s.get() != nullptr)
			rtr_instant_copy(cat.c_str(), s.get());
	}
}

/* Where an instant shows (RTR_INSTANT_*). */
enum class where {
	thread = RTR_INSTANT_THREAD,
	process = RTR_INSTANT_PROCESS,
	global = RTR_INSTANT_GLOBAL
};
template <class... A>
inline void instant(literal cat, literal name, where w, const A &...args) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		if constexpr (sizeof...(A) == 0) {
			rtr_instant_scoped(cat.c_str(), name.c_str(), static_cast<int>(w), nullptr,
					   0);
		} else {
			const arg a[] = {args...};
			detail::packed<sizeof...(A)> p(a);
			rtr_instant_scoped(cat.c_str(), name.c_str(), static_cast<int>(w), p.data(),
					   p.size());
		}
	}
}

/* A complete event with explicit times on the rtr_now_ns() clock. */
inline void complete(literal cat, literal name, uint64_t ts_ns, uint64_t dur_ns) noexcept
{
	rtr_complete(cat.c_str(), name.c_str(), ts_ns, dur_ns);
}
template <class... A>
inline void complete(literal cat, literal name, uint64_t ts_ns, uint64_t dur_ns, const arg &first,
		     const A &...rest) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		const arg a[] = {first, rest...};
		detail::packed<1 + sizeof...(A)> p(a);
		rtr_complete_args(cat.c_str(), name.c_str(), ts_ns, dur_ns, p.data(), p.size());
	}
}
template <class S, detail::if_copied<S> = 0>
inline void complete(literal cat, const S &name, uint64_t ts_ns, uint64_t dur_ns) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		detail::cstr s{std::string_view(name)};
		if (s.get() != nullptr)
			rtr_complete_copy(cat.c_str(), s.get(), ts_ns, dur_ns);
	}
}

/* Counters: one series per name, or one per argument of one sample. */
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
inline void counter(literal cat, literal name, T value) noexcept
{
	if constexpr (std::is_floating_point_v<T>)
		rtr_counter_f64(cat.c_str(), name.c_str(), static_cast<double>(value));
	else
		rtr_counter_i64(cat.c_str(), name.c_str(), static_cast<int64_t>(value));
}
template <class... A>
inline void counter(literal cat, literal name, const arg &first, const A &...rest) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		const arg a[] = {first, rest...};
		detail::packed<1 + sizeof...(A)> p(a);
		rtr_counter_args(cat.c_str(), name.c_str(), p.data(), p.size());
	}
}

/* Flows: arrows between slices (see rtr_flow_start()). */
inline uint64_t flow_id() noexcept
{
	return rtr_flow_id();
}
inline void flow_start(literal cat, literal name, uint64_t id) noexcept
{
	rtr_flow_start(cat.c_str(), name.c_str(), id);
}
inline void flow_step(literal cat, literal name, uint64_t id) noexcept
{
	rtr_flow_step(cat.c_str(), name.c_str(), id);
}
inline void flow_end(literal cat, literal name, uint64_t id) noexcept
{
	rtr_flow_end(cat.c_str(), name.c_str(), id);
}

/* Async spans, matched on (cat, name, id) (see rtr_async_begin()). */
template <class... A>
inline void async_begin(literal cat, literal name, uint64_t id, const A &...args) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		if constexpr (sizeof...(A) == 0) {
			rtr_async_begin(cat.c_str(), name.c_str(), id, nullptr, 0);
		} else {
			const arg a[] = {args...};
			detail::packed<sizeof...(A)> p(a);
			rtr_async_begin(cat.c_str(), name.c_str(), id, p.data(), p.size());
		}
	}
}
template <class... A>
inline void async_instant(literal cat, literal name, uint64_t id, const A &...args) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		if constexpr (sizeof...(A) == 0) {
			rtr_async_instant(cat.c_str(), name.c_str(), id, nullptr, 0);
		} else {
			const arg a[] = {args...};
			detail::packed<sizeof...(A)> p(a);
			rtr_async_instant(cat.c_str(), name.c_str(), id, p.data(), p.size());
		}
	}
}
inline void async_end(literal cat, literal name, uint64_t id) noexcept
{
	rtr_async_end(cat.c_str(), name.c_str(), id);
}

/* Name the calling thread (copied). */
inline void thread_name(std::string_view name) noexcept
{
	detail::cstr s(name);
	if (s.get() != nullptr)
		rtr_thread_name(s.get());
}

inline uint64_t now_ns() noexcept
{
	return rtr_now_ns();
}

/* ------------------------------------------------------------------------- */
/* Session                                                                    */

/* struct rtr_config with owned strings, filled by rtr_config_init() (defaults plus
 * the RINGTRACE_* environment), then by the setters. */
class Config
{
      public:
	Config() noexcept
	{
		rtr_config_init(&c_);
	}
	Config &path(std::string p)
	{
		path_ = std::move(p);
		has_path_ = true;
		return *this;
	}
	Config &process_name(std::string n)
	{
		process_ = std::move(n);
		has_process_ = true;
		return *this;
	}
	Config &categories(std::string c)
	{
		categories_ = std::move(c);
		has_categories_ = true;
		return *this;
	}
	Config &ring_bytes(std::size_t n) noexcept
	{
		c_.ring_bytes = n;
		return *this;
	}
	Config &block_when_full(bool block = true) noexcept
	{
		c_.on_full = block ? RTR_ON_FULL_BLOCK : RTR_ON_FULL_DROP;
		return *this;
	}
	Config &flush_ms(unsigned ms) noexcept
	{
		c_.flush_ms = ms;
		return *this;
	}
	Config &io(int method) noexcept /* RTR_IO_* */
	{
		c_.io = method;
		return *this;
	}
	Config &clock(int clock) noexcept /* RTR_CLOCK_* */
	{
		c_.clock = clock;
		return *this;
	}
	Config &compress(int how) noexcept /* RTR_COMPRESS_* */
	{
		c_.compress = how;
		return *this;
	}
	Config &cache_mb(unsigned mb) noexcept
	{
		c_.cache_mb = mb;
		return *this;
	}
	Config &stop_timeout_ms(unsigned ms) noexcept
	{
		c_.stop_timeout_ms = ms;
		return *this;
	}
	/* The C struct, its strings pointing into this object: valid while it lives. */
	rtr_config get() const noexcept
	{
		rtr_config c = c_;
		if (has_path_)
			c.path = path_.c_str();
		if (has_process_)
			c.process_name = process_.c_str();
		if (has_categories_)
			c.categories = categories_.c_str();
		return c;
	}

      private:
	rtr_config c_;
	std::string path_, process_, categories_;
	bool has_path_ = false, has_process_ = false, has_categories_ = false;
};

/* The recorder from construction to destruction: rtr_start(), rtr_stop(). One at a
 * time per process, made and destroyed on one thread (as rtr_start()/rtr_stop()). */
class Session
{
      public:
	Session() noexcept : err_(rtr_start(nullptr))
	{
	}
	explicit Session(const Config &cfg) noexcept
	{
		rtr_config c = cfg.get();
		err_ = rtr_start(&c);
	}
	~Session()
	{
		stop();
	}
	Session(const Session &) = delete;
	Session &operator=(const Session &) = delete;

	/* rtr_start()'s result: 0, or a negative errno (the session then records nothing). */
	int error() const noexcept
	{
		return err_;
	}
	explicit operator bool() const noexcept
	{
		return err_ == 0 && !stopped_;
	}
	/* rtr_flush(): 0 or a negative errno. */
	int flush() noexcept
	{
		return rtr_flush();
	}
	/* rtr_stop() now (the destructor then does nothing): 0 or a negative errno. */
	int stop() noexcept
	{
		if (err_ != 0 || stopped_)
			return 0;
		stopped_ = true;
		return rtr_stop();
	}
	/* The file's path, its pattern expanded (rtr_trace_path()). */
	static std::string_view path() noexcept
	{
		return rtr_trace_path();
	}
	static rtr_stats stats() noexcept
	{
		rtr_stats st{};
		rtr_stats_get(&st);
		return st;
	}

      private:
	int err_ = 0;
	bool stopped_ = false;
};

#else /* RINGTRACE_DISABLE: the same names, doing nothing. */

inline bool enabled(literal) noexcept
{
	return false;
}
class Scope
{
      public:
	template <class... A> Scope(literal, literal, const A &...) noexcept
	{
	}
	template <class S, detail::if_copied<S> = 0> Scope(literal, const S &) noexcept
	{
	}
	~Scope()
	{
	}
	Scope(const Scope &) = delete;
	Scope &operator=(const Scope &) = delete;
};
enum class where { thread, process, global };
template <class... A> inline void begin(literal, literal, const A &...) noexcept
{
}
template <class S, detail::if_copied<S> = 0> inline void begin(literal, const S &) noexcept
{
}
inline void end(literal, literal) noexcept
{
}
template <class... A> inline void instant(literal, literal, const A &...) noexcept
{
}
template <class S, detail::if_copied<S> = 0> inline void instant(literal, const S &) noexcept
{
}
template <class... A>
inline void complete(literal, literal, uint64_t, uint64_t, const A &...) noexcept
{
}
template <class S, detail::if_copied<S> = 0>
inline void complete(literal, const S &, uint64_t, uint64_t) noexcept
{
}
template <class... A> inline void counter(literal, literal, const A &...) noexcept
{
}
inline uint64_t flow_id() noexcept
{
	return 0;
}
inline void flow_start(literal, literal, uint64_t) noexcept
{
}
inline void flow_step(literal, literal, uint64_t) noexcept
{
}
inline void flow_end(literal, literal, uint64_t) noexcept
{
}
template <class... A> inline void async_begin(literal, literal, uint64_t, const A &...) noexcept
{
}
template <class... A> inline void async_instant(literal, literal, uint64_t, const A &...) noexcept
{
}
inline void async_end(literal, literal, uint64_t) noexcept
{
}
inline void thread_name(std::string_view) noexcept
{
}
inline uint64_t now_ns() noexcept
{
	return 0;
}
class Config
{
      public:
	template <class T> Config &path(const T &) noexcept
	{
		return *this;
	}
	template <class T> Config &process_name(const T &) noexcept
	{
		return *this;
	}
	template <class T> Config &categories(const T &) noexcept
	{
		return *this;
	}
	Config &ring_bytes(std::size_t) noexcept
	{
		return *this;
	}
	Config &block_when_full(bool = true) noexcept
	{
		return *this;
	}
	Config &flush_ms(unsigned) noexcept
	{
		return *this;
	}
	Config &io(int) noexcept
	{
		return *this;
	}
	Config &clock(int) noexcept
	{
		return *this;
	}
	Config &compress(int) noexcept
	{
		return *this;
	}
	Config &cache_mb(unsigned) noexcept
	{
		return *this;
	}
	Config &stop_timeout_ms(unsigned) noexcept
	{
		return *this;
	}
};
class Session
{
      public:
	Session() noexcept
	{
	}
	explicit Session(const Config &) noexcept
	{
	}
	~Session()
	{
	}
	Session(const Session &) = delete;
	Session &operator=(const Session &) = delete;
	int error() const noexcept
	{
		return 0;
	}
	explicit operator bool() const noexcept
	{
		return false;
	}
	int flush() noexcept
	{
		return 0;
	}
	int stop() noexcept
	{
		return 0;
	}
	static std::string_view path() noexcept
	{
		return "";
	}
};

#endif /* RINGTRACE_DISABLE */

} // namespace ringtrace

/*
 * RINGTRACE_SCOPE(cat, name [, key, value]...): a slice from here to the end of the
 * enclosing block, with up to RTR_MAX_ARGS typed arguments (see ringtrace::arg).
 * cat, name and every key must be string literals: each is pasted after "", so
 * anything else fails to compile. Without arguments it is the C RTR_SCOPE (one
 * record, at the end); with them, a B carrying them and an E (see the top of the
 * file). Each value is evaluated once.
 *
 * RINGTRACE_INSTANT(cat, name [, key, value]...): an instant, keys checked the same way.
 */
#define RINGTRACE__CAT2(a, b)	 a##b
#define RINGTRACE__CAT(a, b)	 RINGTRACE__CAT2(a, b)
#define RINGTRACE__FIRST(a, ...) a
/* The number of arguments, 1 .. 33. */
#define RINGTRACE__NARGS(...)                                                                      \
	RINGTRACE__NARGS_(__VA_ARGS__, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, \
			  18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define RINGTRACE__NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, \
			  _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30,  \
			  _31, _32, _33, n, ...)                                                 \
	n
/* name, k1, v1, ...: ", ringtrace::arg("" k1, v1), ..." (nothing for the name alone). An odd
 * count (a key without its value) names an incomplete type: the error says why. */
#define RINGTRACE__KV(k, v) , ::ringtrace::arg("" k, v)
#define RINGTRACE__ARGS(...) \
	RINGTRACE__CAT(RINGTRACE__ARGS_, RINGTRACE__NARGS(__VA_ARGS__))(__VA_ARGS__)
#define RINGTRACE__ARGS_1(n)
#define RINGTRACE__ARGS_3(n, k, v)	 RINGTRACE__KV(k, v)
#define RINGTRACE__ARGS_5(n, k, v, ...)	 RINGTRACE__KV(k, v) RINGTRACE__ARGS_3(n, __VA_ARGS__)
#define RINGTRACE__ARGS_7(n, k, v, ...)	 RINGTRACE__KV(k, v) RINGTRACE__ARGS_5(n, __VA_ARGS__)
#define RINGTRACE__ARGS_9(n, k, v, ...)	 RINGTRACE__KV(k, v) RINGTRACE__ARGS_7(n, __VA_ARGS__)
#define RINGTRACE__ARGS_11(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_9(n, __VA_ARGS__)
#define RINGTRACE__ARGS_13(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_11(n, __VA_ARGS__)
#define RINGTRACE__ARGS_15(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_13(n, __VA_ARGS__)
#define RINGTRACE__ARGS_17(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_15(n, __VA_ARGS__)
#define RINGTRACE__ARGS_19(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_17(n, __VA_ARGS__)
#define RINGTRACE__ARGS_21(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_19(n, __VA_ARGS__)
#define RINGTRACE__ARGS_23(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_21(n, __VA_ARGS__)
#define RINGTRACE__ARGS_25(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_23(n, __VA_ARGS__)
#define RINGTRACE__ARGS_27(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_25(n, __VA_ARGS__)
#define RINGTRACE__ARGS_29(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_27(n, __VA_ARGS__)
#define RINGTRACE__ARGS_31(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_29(n, __VA_ARGS__)
#define RINGTRACE__ARGS_33(n, k, v, ...) RINGTRACE__KV(k, v) RINGTRACE__ARGS_31(n, __VA_ARGS__)
#define RINGTRACE__UNPAIRED(...)                                 \
	, ::ringtrace::detail::arguments_come_in_key_value_pairs \
	{                                                        \
	}
#define RINGTRACE__ARGS_2  RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_4  RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_6  RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_8  RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_10 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_12 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_14 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_16 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_18 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_20 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_22 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_24 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_26 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_28 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_30 RINGTRACE__UNPAIRED
#define RINGTRACE__ARGS_32 RINGTRACE__UNPAIRED
namespace ringtrace::detail
{
struct arguments_come_in_key_value_pairs;
}

#ifndef RINGTRACE_DISABLE
#define RINGTRACE_SCOPE(...) \
	RINGTRACE__SCOPE(RINGTRACE__CAT(ringtrace__scope_, __COUNTER__), __VA_ARGS__)
#define RINGTRACE__SCOPE(id, cat, ...)                                          \
	static constexpr ::rtr_site RINGTRACE__CAT(id, _site) = {               \
		"" cat, "" RINGTRACE__FIRST(__VA_ARGS__, ~)};                   \
	static int RINGTRACE__CAT(id, _decision);                               \
	const ::ringtrace::detail::site_scope id(&RINGTRACE__CAT(id, _site),    \
						 &RINGTRACE__CAT(id, _decision) \
							 RINGTRACE__ARGS(__VA_ARGS__))
#define RINGTRACE_INSTANT(cat, ...)  \
	::ringtrace::instant("" cat, \
			     "" RINGTRACE__FIRST(__VA_ARGS__, ~) RINGTRACE__ARGS(__VA_ARGS__))
#else
/* Nothing is evaluated (the values are named in a lambda never called, so that a
 * variable used only for tracing draws no warning); the strings are still checked,
 * so that what compiles here compiles with the recorder in. */
namespace ringtrace::detail
{
template <class... T> inline void unused(const T &...) noexcept
{
}
} // namespace ringtrace::detail
#define RINGTRACE_SCOPE(cat, ...)                                                 \
	((void)[&] {                                                              \
		::ringtrace::detail::unused(                                      \
			::ringtrace::literal("" cat),                             \
			::ringtrace::literal("" RINGTRACE__FIRST(__VA_ARGS__, ~)) \
				RINGTRACE__ARGS(__VA_ARGS__));                    \
	})
#define RINGTRACE_INSTANT(cat, ...) RINGTRACE_SCOPE(cat, __VA_ARGS__)
#endif

#endif /* RINGTRACE_HPP */
