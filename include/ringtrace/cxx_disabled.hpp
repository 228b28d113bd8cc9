/* SPDX-License-Identifier: MIT */
/*
 * The C++ API with RINGTRACE_DISABLE: the same names, doing nothing. Do not include directly:
 * include <ringtrace.hpp>, which documents every name here.
 */
#ifndef RINGTRACE_CXX_DISABLED_HPP
#define RINGTRACE_CXX_DISABLED_HPP

#ifndef RINGTRACE_HPP
#error "include <ringtrace.hpp>, not <ringtrace/cxx_disabled.hpp>"
#endif

namespace ringtrace
{

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
	template <class T> void add(literal, const T &) noexcept
	{
	}
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
template <class S, detail::if_copied<S> = 0> inline void end(literal, const S &) noexcept
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
	Config &rotate(unsigned, unsigned = 0, unsigned = 0) noexcept
	{
		return *this;
	}
	Config &flight(unsigned = 64, bool = true) noexcept
	{
		return *this;
	}
	template <class T> Config &signals(const T &) noexcept
	{
		return *this;
	}
	template <class T> Config &snapshot_signal(const T &) noexcept
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
	int snapshot(const char * = nullptr) noexcept
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

} // namespace ringtrace

#endif /* RINGTRACE_CXX_DISABLED_HPP */
