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
 * (std::string_view, std::string, a `const char *`). The macros evaluate each value
 * exactly once when the event is recorded and not at all otherwise (a stopped
 * recorder or a filtered category costs a load and a branch, as with
 * RINGTRACE_DISABLE: put no side effect the program needs in them). The functions
 * and classes, being functions, evaluate theirs once in any case, and build nothing
 * from them unless the event is recorded; ringtrace::enabled(cat) guards costly
 * ones. An `arg` refers to its value until the end of the full expression: use it
 * inside the call, like std::initializer_list.
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
 * Hooks for calls the C API may gain: when <ringtrace.h> defines
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

} // namespace ringtrace

#ifndef RINGTRACE_DISABLE
#include "ringtrace/cxx.hpp"
#else
#include "ringtrace/cxx_disabled.hpp"
#endif

/*
 * RINGTRACE_SCOPE(cat, name [, key, value]...): a slice from here to the end of the
 * enclosing block, with up to RTR_MAX_ARGS typed arguments (see ringtrace::arg).
 * cat, name and every key must be string literals: each is pasted after "", so
 * anything else fails to compile. Without arguments it is the C RTR_SCOPE (one
 * record, at the end); with them, a B carrying them and an E (see the top of the
 * file). Each value is evaluated once if the scope is recorded, else not at all.
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
							 RINGTRACE__LAZY(__VA_ARGS__))
/* name, k1, v1, ...: nothing for the name alone, else ", lambda": the values are
 * evaluated inside it, when the event is recorded. */
#define RINGTRACE__LAZY(...) \
	RINGTRACE__CAT(RINGTRACE__LAZY_, RINGTRACE__NARGS(__VA_ARGS__))(__VA_ARGS__)
#define RINGTRACE__LAZY_1(n)
#define RINGTRACE__LAZY_N(...) \
	, [&](const auto &rtr_sink_) { rtr_sink_(0 RINGTRACE__ARGS(__VA_ARGS__)); }
#define RINGTRACE__LAZY_2  RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_3  RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_4  RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_5  RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_6  RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_7  RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_8  RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_9  RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_10 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_11 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_12 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_13 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_14 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_15 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_16 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_17 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_18 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_19 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_20 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_21 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_22 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_23 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_24 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_25 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_26 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_27 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_28 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_29 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_30 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_31 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_32 RINGTRACE__LAZY_N
#define RINGTRACE__LAZY_33 RINGTRACE__LAZY_N
#define RINGTRACE_INSTANT(cat, ...)                                                   \
	(::ringtrace::enabled("" cat)                                                 \
		 ? ::ringtrace::instant("" cat, "" RINGTRACE__FIRST(__VA_ARGS__, ~)   \
							RINGTRACE__ARGS(__VA_ARGS__)) \
		 : void())
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
